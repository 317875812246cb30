package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.redis.Load.Sample;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One master of a three-master Redis Cluster killed under a load of decisions, then restarted.
 *
 * <p>Mostly waiting (its load is four threads, each pausing 200 µs between decisions), it runs beside the other integration tests
 * that are not {@code @Isolated}; its bound on the slowest decision holds with them, not beside a load test.
 */
@Timeout(90)
class RedisClusterFailuresIT {

    /** How long a decision may wait for Redis before it is made in memory. */
    private static final Duration BUDGET = Duration.ofMillis(50);

    /** Slack above the budget for a busy two-core machine: thread scheduling, GC. */
    private static final long SLACK_MILLIS = 200;

    private static final Policy POLICY = Policy.of("outage", Limit.of(20, Rate.perSecond(10)));

    @Test
    void onlyTheKeysOfAKilledMasterDegradeAndTheyRecoverWhenItReturns() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3, "--cluster-require-full-coverage", "no");
                RedisRateLimiter limiter = limiter(cluster);
                Load load = new Load(limiter, POLICY, 4, 30)) {
            RedisServer victim = cluster.masters().get(1);
            TimeUnit.MILLISECONDS.sleep(500);

            victim.kill();
            long killed = System.nanoTime(); // once it is dead: killing it may take a while on a busy machine
            TimeUnit.SECONDS.sleep(2);
            long restarted = System.nanoTime();
            victim.restart();
            long servingAgain = awaitClusterOk(victim);
            long back = load.awaitFirstSample(
                    restarted,
                    s -> servedBy(cluster, s) == victim && !s.decision().degraded(),
                    15_000);
            TimeUnit.SECONDS.sleep(1);
            long settled = System.nanoTime();
            TimeUnit.MILLISECONDS.sleep(500);

            List<Sample> during = load.between(killed + 200_000_000L, restarted);
            List<Sample> victims =
                    during.stream().filter(s -> servedBy(cluster, s) == victim).toList();
            List<Sample> others =
                    during.stream().filter(s -> servedBy(cluster, s) != victim).toList();
            System.out.printf(
                    "cluster, one master killed: %d decisions on its keys, %d on the others (%d degraded);"
                            + " p99 %.1f ms, slowest %.1f ms; its keys back on Redis %.1f s after its restart, which"
                            + " reported cluster_state:ok after %.1f s%n",
                    victims.size(),
                    others.size(),
                    others.stream().filter(s -> s.decision().degraded()).count(),
                    load.percentileMillis(99),
                    load.slowestMillis(),
                    (back - restarted) / 1e9,
                    (servingAgain - restarted) / 1e9);
            assertThat(victims)
                    .isNotEmpty()
                    .allSatisfy(s -> assertThat(s.decision().degraded()).isTrue());
            assertThat(others.stream().filter(s -> !s.decision().degraded()).count())
                    .as("the other masters keep deciding")
                    .isGreaterThanOrEqualTo(others.size() * 99L / 100);
            assertThat(back)
                    .as("a key of the restarted master decided by Redis again")
                    .isPositive();
            assertThat(load.between(settled, Long.MAX_VALUE))
                    .as("every key on Redis a second later")
                    .isNotEmpty()
                    .allSatisfy(s -> assertThat(s.decision().degraded()).isFalse());
            assertThat(load.escaped()).isEmpty();
            assertThat(load.slowestMillis()).isLessThanOrEqualTo(BUDGET.toMillis() + SLACK_MILLIS);
        }
    }

    @Test
    void aClusterThatLostFullCoverageAnswersClusterDownThatDegradesTheDecision() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3);
                RedisRateLimiter limiter = limiter(cluster);
                Load load = new Load(limiter, POLICY, 4, 30)) {
            RedisServer victim = cluster.masters().get(2);
            TimeUnit.MILLISECONDS.sleep(500);

            long killed = System.nanoTime();
            victim.kill();
            long clusterDown = load.awaitFirst(
                    killed,
                    decision -> decision.degraded()
                            && decision.degradation().cause() == Degradation.Cause.ERROR_REPLY
                            && decision.degradation().detail().contains("CLUSTERDOWN"),
                    15_000);
            victim.restart();
            long restarted = System.nanoTime();
            long back = load.awaitFirst(restarted, decision -> !decision.degraded(), 15_000);

            System.out.printf(
                    "cluster without full coverage: CLUSTERDOWN %.1f s after the kill, back on Redis %.1f s after the"
                            + " restart%n",
                    (clusterDown - killed) / 1e9, (back - restarted) / 1e9);
            assertThat(clusterDown).as("a decision degraded by CLUSTERDOWN").isPositive();
            assertThat(back).as("a decision made by Redis again").isPositive();
            assertThat(load.escaped()).isEmpty();
            assertThat(load.slowestMillis()).isLessThanOrEqualTo(BUDGET.toMillis() + SLACK_MILLIS);
        }
    }

    /** Waits until the node reports the cluster healthy again; returns when. */
    private static long awaitClusterOk(RedisServer node) throws InterruptedException {
        for (int i = 0; i < 300; i++) {
            if (((String) node.command("CLUSTER", "INFO")).contains("cluster_state:ok")) {
                return System.nanoTime();
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        return -1;
    }

    private static RedisRateLimiter limiter(RedisCluster cluster) {
        return Connections.connected(RedisRateLimiter.builder()
                .clusterUris(cluster.uris())
                .timeout(BUDGET)
                .failurePolicy(FailurePolicy.LOCAL)
                .denyCache(0)
                .build());
    }

    private static RedisServer servedBy(RedisCluster cluster, Sample sample) {
        return cluster.masterForSlot(RedisCluster.slot("tollgate:" + POLICY.name() + ":" + sample.key()));
    }
}
