package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The master behind a Sentinel killed under load: decisions follow the promoted replica.
 *
 * <p>Mostly waiting (its load is four threads, each pausing 200 µs between decisions), it runs beside the other integration tests
 * that are not {@code @Isolated}; its bound on the slowest decision holds with them, not beside a load test.
 */
@Timeout(90)
class SentinelFailoverIT {

    /** How long a decision may wait for Redis before it is made in memory. */
    private static final Duration BUDGET = Duration.ofMillis(50);

    /** Slack above the budget for a busy two-core machine: thread scheduling, GC. */
    private static final long SLACK_MILLIS = 200;

    private static final Policy POLICY = Policy.of("failover", Limit.of(20, Rate.perSecond(10)));

    @Test
    void decisionsGoBackToRedisSoonAfterSentinelPromotesTheReplica() throws Exception {
        try (RedisServer master = RedisServer.start();
                RedisServer replica = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
                RedisServer sentinel = RedisServer.startSentinel(master, "mymaster");
                RedisRateLimiter limiter = RedisRateLimiter.builder()
                        .uri(sentinel.sentinelUri("mymaster"))
                        .timeout(BUDGET)
                        .failurePolicy(FailurePolicy.LOCAL)
                        .build();
                Load load = new Load(limiter, POLICY, 4, 10)) {
            awaitReplicaInSync(replica);
            TimeUnit.MILLISECONDS.sleep(500);

            long killed = System.nanoTime();
            master.kill();
            long promoted = awaitPromotion(sentinel, replica);
            long back = load.awaitFirst(promoted, decision -> !decision.degraded(), 15_000);
            TimeUnit.MILLISECONDS.sleep(300);

            System.out.printf(
                    "sentinel failover: replica promoted %.1f s after the master was killed; decisions back on Redis"
                            + " %.2f s after the promotion; p99 %.1f ms, slowest %.1f ms%n",
                    (promoted - killed) / 1e9,
                    (back - promoted) / 1e9,
                    load.percentileMillis(99),
                    load.slowestMillis());
            assertThat(back).as("a decision made by the promoted replica").isPositive();
            assertThat((back - promoted) / 1_000_000).isLessThan(1_500);
            assertThat(replica.command("DBSIZE"))
                    .as("buckets written to the new master")
                    .isNotEqualTo(0L);
            assertThat(load.escaped()).isEmpty();
            assertThat(load.slowestMillis()).isLessThanOrEqualTo(BUDGET.toMillis() + SLACK_MILLIS);
        }
    }

    private static void awaitReplicaInSync(RedisServer replica) throws InterruptedException {
        for (int i = 0; i < 200 && !replica.info("master_link_status").equals("up"); i++) {
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    /** Waits until the Sentinel names the replica as master; returns when. */
    private static long awaitPromotion(RedisServer sentinel, RedisServer replica) throws InterruptedException {
        for (int i = 0; i < 600; i++) {
            List<?> address = (List<?>) sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster");
            if (address != null && address.get(1).equals(Integer.toString(replica.port()))) {
                return System.nanoTime();
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        throw new AssertionError("the Sentinel did not promote the replica within 30 s");
    }
}
