package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The live share: each limiter announces itself in Redis and counts the live instances, and in an outage its
 * {@code LOCAL} fallback enforces that share of each limit, so that a fleet together admits about the limit,
 * not the limit once per instance; without {@code expectedInstances}.
 *
 * <p>Mostly waiting, it runs beside the other integration tests that are not {@code @Isolated}.
 */
@Timeout(120)
class LiveShareIT {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    /** 30 tokens, refilled 30 an hour: about nothing comes back during a test. */
    private static final Policy THIRTY_PER_HOUR = Policy.of("share", Limit.of(30, Rate.perHour(30)));

    private final List<RedisRateLimiter> limiters = new ArrayList<>();

    @BeforeEach
    void healthyRedis() {
        redis.server().heal();
        redis.server().command("FLUSHALL");
    }

    @AfterEach
    void close() {
        limiters.forEach(RedisRateLimiter::close);
        if (!redis.server().isRunning()) {
            redis.server().restart();
        }
    }

    @Test
    void eachLimiterCountsTheLiveInstancesAndAClosedOneDropsOut() throws Exception {
        RedisRateLimiter first = limiter();
        RedisRateLimiter second = limiter();
        RedisRateLimiter third = limiter();

        await("each counts three", () -> limiters.stream().allMatch(l -> l.instances() == 3));
        third.close();
        limiters.remove(third);

        await("a closed instance withdraws", () -> first.instances() == 2 && second.instances() == 2);
        assertThat(redis.server().command("ZCARD", "tollgate:instances/live")).isEqualTo(2L);
    }

    @Test
    void threeInstancesInAnOutageTogetherAdmitTheLimitNotThreeTimesIt() throws Exception {
        for (int i = 0; i < 3; i++) {
            limiter();
        }
        await("each counts three", () -> limiters.stream().allMatch(l -> l.instances() == 3));

        redis.server().kill();
        AtomicLong admitted = new AtomicLong();
        AtomicLong degraded = new AtomicLong();
        List<Thread> clients = new ArrayList<>();
        for (RedisRateLimiter limiter : limiters) {
            for (int t = 0; t < 4; t++) {
                Thread client = new Thread(() -> {
                    for (int request = 0; request < 50; request++) {
                        Decision decision = limiter.tryAcquire("mallory", THIRTY_PER_HOUR);
                        if (decision.allowed()) {
                            admitted.incrementAndGet();
                        }
                        if (decision.degraded()) {
                            degraded.incrementAndGet();
                        }
                    }
                });
                client.start();
                clients.add(client);
            }
        }
        for (Thread client : clients) {
            client.join();
        }

        assertThat(degraded.get()).as("every decision made without Redis").isEqualTo(600);
        assertThat(admitted.get())
                .as("each instance its third of 30 tokens, as it counted three instances")
                .isEqualTo(30);
        assertThat(limiters)
                .allSatisfy(limiter -> assertThat(limiter.instances())
                        .as("the last count stays in force while Redis is away")
                        .isEqualTo(3));
    }

    @Test
    void onRedisClusterTheInstancesAreCountedAlikeAndTheOutageShareHolds() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3)) {
            List<RedisRateLimiter> onCluster = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                onCluster.add(
                        RedisRateLimiter.builder().clusterUris(cluster.uris()).build());
            }
            limiters.addAll(onCluster);
            await("each counts three", () -> onCluster.stream().allMatch(l -> l.instances() == 3));

            cluster.masters().forEach(RedisServer::kill);
            // On Cluster a killed master leaves calls unanswered rather than refused: Redis counts as down,
            // and LOCAL decides on its own, once calls have stayed unanswered for two seconds; until then,
            // nothing is admitted.
            long beforeDown = 0;
            for (RedisRateLimiter limiter : onCluster) {
                for (int request = 0; request < 10; request++) {
                    beforeDown += limiter.tryAcquire("mallory", THIRTY_PER_HOUR).allowed() ? 1 : 0;
                }
            }
            Thread.sleep(2_500);
            long admitted = 0;
            for (RedisRateLimiter limiter : onCluster) {
                for (int request = 0; request < 20; request++) {
                    admitted += limiter.tryAcquire("mallory", THIRTY_PER_HOUR).allowed() ? 1 : 0;
                }
            }

            assertThat(beforeDown).as("while Redis may still be deciding").isZero();
            assertThat(admitted).as("each instance its third of 30 tokens").isEqualTo(30);
        }
    }

    @Test
    void aFixedCountOverridesTheLiveOneOfItsOwnLimiterWhichIsStillAnnouncedForResetsToWaitFor() throws Exception {
        RedisRateLimiter live = limiter();
        RedisRateLimiter fixed = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .failurePolicy(FailurePolicy.LOCAL)
                .expectedInstances(5)
                .build();
        limiters.add(fixed);

        Thread.sleep(LiveInstances.INTERVAL.toMillis() * 2); // two announcements of the live one since

        assertThat(fixed.instances()).isEqualTo(5);
        assertThat(live.instances())
                .as("a limiter with a fixed count announces itself: another one counts it")
                .isEqualTo(2);
        assertThat(redis.server().command("ZCARD", StoredKeys.ANNOUNCEMENTS)).isEqualTo(2L);
    }

    private RedisRateLimiter limiter() {
        RedisRateLimiter limiter =
                RedisRateLimiter.builder().uri(redis.server().uri()).build(); // the defaults: LOCAL, live count
        limiters.add(limiter);
        return limiter;
    }

    private static void await(String what, BooleanSupplier condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
