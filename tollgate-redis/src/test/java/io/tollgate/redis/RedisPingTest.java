package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link RedisRateLimiter#ping()}, the readiness probe, against real servers that answer and that do not. */
@Timeout(60)
class RedisPingTest {

    @Test
    void answersEmptyWhileRedisAnswersAndTheReasonWhileItDoesNot() {
        try (RedisServer server = RedisServer.start();
                RedisRateLimiter limiter =
                        RedisRateLimiter.builder().uri(server.uri()).build()) {
            Optional<String> up = ping(limiter);
            server.pause();
            Optional<String> frozen = ping(limiter);
            server.resume();
            server.kill();
            Optional<String> killed = ping(limiter);

            assertThat(up).isEmpty();
            assertThat(frozen).hasValue("Redis did not answer within 50 ms");
            assertThat(killed).hasValueSatisfying(reason -> assertThat(reason).startsWith("Redis is unreachable"));
        }
    }

    @Test
    void saysSoWhenItNeverConnected() {
        RedisServer server = RedisServer.start();
        String uri = server.uri();
        server.close();
        try (RedisRateLimiter limiter = RedisRateLimiter.builder().uri(uri).build()) {
            assertThat(ping(limiter))
                    .hasValueSatisfying(reason -> assertThat(reason)
                            .startsWith("not connected to Redis at " + uri.substring("redis://".length())
                                    + ": Connection refused"));
        }
    }

    @Test
    void asksEveryMasterOfACluster() {
        try (RedisCluster cluster = RedisCluster.start(3, "--cluster-require-full-coverage", "no");
                RedisRateLimiter limiter = RedisRateLimiter.builder()
                        .clusterUris(cluster.uris())
                        .timeout(Duration.ofMillis(500))
                        .build()) {
            Connections.connected(limiter); // every master answers
            cluster.masters().get(2).kill();
            Optional<String> oneDown = ping(limiter);

            assertThat(oneDown).isPresent();
        }
    }

    private static Optional<String> ping(RedisRateLimiter limiter) {
        return limiter.ping().toCompletableFuture().join();
    }
}
