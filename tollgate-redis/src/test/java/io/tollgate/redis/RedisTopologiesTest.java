package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The limiter over TLS, through Sentinel and on Redis Cluster. */
class RedisTopologiesTest {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    private static final Duration PATIENT = Duration.ofSeconds(5);

    private static final Policy FIVE = Policy.of("five", Limit.of(5, Rate.perMinute(5)));

    @Test
    void worksOverTls() {
        try (RedisServer server = RedisServer.startWithTls();
                RedisRateLimiter limiter = RedisRateLimiter.builder()
                        .timeout(PATIENT)
                        // the test certificate is self-signed: skip verification, for this test only
                        .uri("rediss://127.0.0.1:" + server.tlsPort() + "?verifyPeer=NONE")
                        .build()) {
            Connections.connected(limiter);
            limiter.tryAcquire("alice", FIVE, 5);

            assertThat(limiter.tryAcquire("alice", FIVE).allowed()).isFalse();
            assertThat(server.command("EXISTS", "tollgate:five:alice")).isEqualTo(1L);
        }
    }

    @Test
    void worksThroughSentinel() {
        try (RedisServer master = RedisServer.start();
                RedisServer sentinel = RedisServer.startSentinel(master, "mymaster");
                RedisRateLimiter limiter = RedisRateLimiter.builder()
                        .timeout(PATIENT)
                        .uri(sentinel.sentinelUri("mymaster"))
                        .build()) {
            Connections.connected(limiter);
            limiter.tryAcquire("alice", FIVE, 5);

            assertThat(limiter.tryAcquire("alice", FIVE).allowed()).isFalse();
            assertThat(master.command("EXISTS", "tollgate:five:alice")).isEqualTo(1L);
        }
    }

    @Test
    void spreadsKeysOverEveryMasterOfACluster() {
        try (RedisCluster cluster = RedisCluster.start(3);
                RedisRateLimiter limiter = RedisRateLimiter.builder()
                        .timeout(PATIENT)
                        .clusterUris(cluster.uris())
                        .build()) {
            Connections.connected(limiter);
            for (int i = 0; i < 300; i++) {
                limiter.tryAcquire("client-" + i, FIVE, 5);
            }

            for (int i = 0; i < 300; i++) {
                assertThat(limiter.tryAcquire("client-" + i, FIVE).allowed()).isFalse();
            }
            for (RedisServer master : cluster.masters()) {
                assertThat((Long) master.command("DBSIZE")).isBetween(50L, 150L);
            }
        }
    }

    @Test
    void reloadsTheScriptOnTheClusterNodeThatLostIt() {
        try (RedisCluster cluster = RedisCluster.start(3);
                RedisRateLimiter limiter = RedisRateLimiter.builder()
                        .timeout(PATIENT)
                        .clusterUris(cluster.uris())
                        .build()) {
            Connections.connected(limiter);
            limiter.tryAcquire("alice", FIVE, 2);
            RedisServer owner =
                    cluster.masterForSlot(RedisCluster.slot("tollgate:five:alice".getBytes(StandardCharsets.UTF_8)));

            owner.command("SCRIPT", "FLUSH");
            Decision decision = limiter.tryAcquire("alice", FIVE, 2);

            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isEqualTo(1);
            assertThat(owner.command("SCRIPT", "EXISTS", limiter.scriptDigest()))
                    .isEqualTo(List.of(1L));
        }
    }
}
