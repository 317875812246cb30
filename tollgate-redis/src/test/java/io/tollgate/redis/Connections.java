package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * Waits for a limiter's connection. On a busy machine a TLS or cluster handshake may outlast the builder's
 * first attempt of two seconds, and a limiter not connected yet decides by its failure policy at once: that
 * is a test of failures, which the tests that call this are not.
 */
final class Connections {

    private static final Duration AT_MOST = Duration.ofSeconds(30);

    private Connections() {}

    /**
     * Returns {@code limiter} once it answers a ping (every master, on Redis Cluster).
     *
     * @throws AssertionError if it does not within 30 s, with why
     */
    static RedisRateLimiter connected(RedisRateLimiter limiter) {
        long deadline = System.nanoTime() + AT_MOST.toNanos();
        Optional<String> why = ping(limiter);
        while (why.isPresent() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            why = ping(limiter);
        }
        assertThat(why).as("the limiter connects within %s", AT_MOST).isEmpty();
        return limiter;
    }

    private static Optional<String> ping(RedisRateLimiter limiter) {
        return limiter.ping().toCompletableFuture().join();
    }
}
