package io.tollgate.redis;

import io.tollgate.fixtures.Eventually;
import java.time.Duration;

/**
 * Waits for a limiter's connection. On a busy machine a TLS or cluster handshake may outlast the builder's
 * first attempt of two seconds, and a limiter not connected yet decides by its failure policy at once: that
 * is a test of failures, which the tests that call this are not.
 */
final class Connections {

    private Connections() {}

    /**
     * Returns {@code limiter} once it answers a ping (every master, on Redis Cluster).
     *
     * @throws AssertionError if it does not within 30 s, with why
     */
    static RedisRateLimiter connected(RedisRateLimiter limiter) {
        Eventually.noProblem(
                () -> limiter.ping().toCompletableFuture().join(), Duration.ofSeconds(30), "the limiter connects");
        return limiter;
    }
}
