package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.LoggedLines;
import io.tollgate.redis.Load.Sample;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.RedisServer;
import java.text.MessageFormat;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Breaks a real redis-server under a load of decisions and checks that every decision still comes back
 * within the time budget, decided by the failure policy, with no exception escaping; and that decisions go
 * back to Redis soon after it is repaired.
 */
@Timeout(60)
@Isolated // alone on the machine: its bounds hold for a machine not busy with other tests
class RedisFailuresIT {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @RegisterExtension
    final LoggedLines log = new LoggedLines(RedisRateLimiter.class);

    private static final Duration BUDGET = Duration.ofMillis(50);

    /** Slack above the budget for a busy two-core machine: thread scheduling, GC. */
    private static final long SLACK_MILLIS = 200;

    private static final Policy POLICY = Policy.of("outage", Limit.of(20, Rate.perSecond(10)));

    @BeforeEach
    void healthyRedis() {
        redis.server().heal();
        redis.server().command("FLUSHALL");
    }

    @AfterEach
    void repairRedis() {
        redis.server().heal();
    }

    @Test
    void aKilledRedisWithFailOpenAnswersAllowedAndDegradedWithinTheBudget() throws Exception {
        Outage outage = outage(FailurePolicy.ALLOW, redis.server()::kill, redis.server()::restart);

        assertThat(outage.during()).isNotEmpty().allSatisfy(sample -> {
            assertThat(sample.decision().allowed()).isTrue();
            assertThat(sample.decision().degradation().fallback()).isEqualTo(FailurePolicy.ALLOW);
        });
        outage.assertEveryDecisionWithinBudgetAndNothingEscaped();
        outage.assertBackOnRedisWithinAboutASecond();
    }

    @Test
    void aKilledRedisWithFailClosedAnswersDeniedAndDegraded() throws Exception {
        Outage outage = outage(FailurePolicy.DENY, redis.server()::kill, redis.server()::restart);

        assertThat(outage.during()).isNotEmpty().allSatisfy(sample -> {
            assertThat(sample.decision().allowed()).isFalse();
            assertThat(sample.decision().degraded()).isTrue();
            assertThat(sample.decision().retryAfterMicros()).isPositive();
        });
        outage.assertEveryDecisionWithinBudgetAndNothingEscaped();
        outage.assertBackOnRedisWithinAboutASecond();
    }

    @Test
    void aKilledRedisWithTheLocalFallbackKeepsEachKeyInsideItsLimit() throws Exception {
        Outage outage = outage(FailurePolicy.LOCAL, redis.server()::kill, redis.server()::restart);

        Map<String, Long> admittedPerKey = outage.during().stream()
                .filter(sample -> sample.decision().allowed())
                .collect(Collectors.groupingBy(Sample::key, Collectors.counting()));
        double outageSeconds = outage.outageNanos() / 1e9;
        long bound = 20 + (long) Math.ceil(10 * (outageSeconds + 0.5));
        assertThat(outage.during())
                .allSatisfy(sample -> assertThat(sample.decision().degraded()).isTrue());
        assertThat(admittedPerKey.values())
                .allSatisfy(admitted -> assertThat(admitted).isLessThanOrEqualTo(bound));
        assertThat(outage.during())
                .anySatisfy(sample -> assertThat(sample.decision().allowed()).isFalse());
        outage.assertEveryDecisionWithinBudgetAndNothingEscaped();
        outage.assertBackOnRedisWithinAboutASecond();
    }

    @Test
    void aFrozenRedisIsWaitedForNoLongerThanTheBudget() throws Exception {
        Outage outage = outage(FailurePolicy.LOCAL, redis.server()::pause, redis.server()::resume);

        assertThat(outage.during())
                .isNotEmpty()
                .allSatisfy(sample -> assertThat(sample.decision().degradation().cause())
                        .isIn(Degradation.Cause.TIMEOUT, Degradation.Cause.CIRCUIT_OPEN));
        outage.assertEveryDecisionWithinBudgetAndNothingEscaped();
        outage.assertBackOnRedisWithinAboutASecond();
    }

    @Test
    void aSlowRedisIsWaitedForNoLongerThanTheBudget() throws Exception {
        Outage outage = outage(
                FailurePolicy.ALLOW,
                () -> CompletableFuture.runAsync(() -> redis.server().command("DEBUG", "SLEEP", "1.2")),
                () -> {});

        assertThat(outage.during())
                .anySatisfy(sample ->
                        assertThat(sample.decision().degradation().cause()).isEqualTo(Degradation.Cause.TIMEOUT));
        outage.assertEveryDecisionWithinBudgetAndNothingEscaped();
        outage.assertBackOnRedisWithinAboutASecond();
    }

    @Test
    void aRedisOutOfMemoryAnswersAnErrorThatDegradesTheDecision() throws Exception {
        Outage outage = outOfMemory();

        assertThat(outage.during()).anySatisfy(sample -> {
            // a decision already on its way when the fault began is not degraded: look past it
            assertThat(sample.decision().degradation()).isNotNull();
            assertThat(sample.decision().degradation().cause()).isEqualTo(Degradation.Cause.ERROR_REPLY);
            assertThat(sample.decision().degradation().detail()).contains("OOM");
        });
        outage.assertEveryDecisionWithinBudgetAndNothingEscaped();
        outage.assertBackOnRedisWithinAboutASecond();
    }

    @Test
    void aRedisOutOfMemoryIsLoggedOnceHoweverManyDecisionsItRefuses() throws Exception {
        Outage outage = outOfMemory();

        long refused = outage.during().stream()
                .filter(sample -> sample.decision().degraded()
                        && sample.decision().degradation().cause() == Degradation.Cause.ERROR_REPLY)
                .count();
        List<String> lines = log.lines().stream()
                .map(line -> MessageFormat.format(line.getMessage(), line.getParameters()))
                .filter(line -> line.contains(" writes"))
                .toList();
        assertThat(refused).isGreaterThan(1);
        assertThat(lines)
                .singleElement()
                .asString()
                .startsWith("Redis at " + redis.server().uri().substring("redis://".length())
                        + " (no TLS) refuses writes: it is out of memory")
                .contains("the failure policy decides until it has room")
                .contains("docs/redis.md#sizing-redis");
    }

    @Test
    void aRedisTurnedIntoAReplicaAnswersReadOnlyThatDegradesTheDecision() throws Exception {
        try (RedisServer master = RedisServer.start()) {
            Outage outage = outage(
                    FailurePolicy.ALLOW,
                    () -> redis.server().command("REPLICAOF", "127.0.0.1", Integer.toString(master.port())),
                    () -> redis.server().command("REPLICAOF", "NO", "ONE"));

            assertThat(outage.during()).anySatisfy(sample -> {
                // a decision already on its way when the fault began is not degraded: look past it
                assertThat(sample.decision().degradation()).isNotNull();
                assertThat(sample.decision().degradation().cause()).isEqualTo(Degradation.Cause.ERROR_REPLY);
                assertThat(sample.decision().degradation().detail()).contains("READONLY");
            });
            outage.assertEveryDecisionWithinBudgetAndNothingEscaped();
            outage.assertBackOnRedisWithinAboutASecond();
        }
    }

    @Test
    void closingTheLimiterLeavesNoThreadBehind() throws Exception {
        Set<String> before = threadNames();
        try (RedisRateLimiter limiter = limiter(FailurePolicy.LOCAL)) {
            limiter.tryAcquire("alice", POLICY);
            redis.server().kill();
            for (int i = 0; i < 20; i++) {
                limiter.tryAcquire("alice", POLICY);
            }
            redis.server().restart();
        }
        TimeUnit.MILLISECONDS.sleep(500);

        Set<String> left = threadNames();
        left.removeAll(before);
        assertThat(left)
                .as("threads started by the limiter and still alive after close")
                .noneMatch(name -> name.startsWith("lettuce") || name.startsWith("tollgate"));
    }

    /** One run in which Redis is out of memory for a second ({@code maxmemory 1}, {@code noeviction}). */
    private Outage outOfMemory() throws Exception {
        return outage(
                FailurePolicy.ALLOW,
                () -> {
                    redis.server().command("CONFIG", "SET", "maxmemory-policy", "noeviction");
                    redis.server().command("CONFIG", "SET", "maxmemory", "1");
                },
                () -> redis.server().command("CONFIG", "SET", "maxmemory", "0"));
    }

    /** One run: healthy for half a second, broken for a second, then repaired, under load. */
    private Outage outage(FailurePolicy policy, Runnable breakRedis, Runnable repairRedis) throws Exception {
        try (RedisRateLimiter limiter = limiter(policy);
                Load load = new Load(limiter, POLICY, 4, 10)) {
            TimeUnit.MILLISECONDS.sleep(500);
            breakRedis.run();
            // Broken once the fault is in force: a kill or a signal has been delivered when its command returns,
            // which on a busy machine may take longer than the 100 ms that during() leaves for the limiter to notice
            long broken = System.nanoTime();
            TimeUnit.MILLISECONDS.sleep(1_000);
            long repaired = System.nanoTime();
            repairRedis.run();
            long backOnRedis = load.awaitFirst(repaired, decision -> !decision.degraded(), 10_000);
            TimeUnit.MILLISECONDS.sleep(200);
            load.close();
            Outage outage = new Outage(load, broken, repaired, backOnRedis);
            System.out.printf(
                    "%s, %s: %d decisions, p99 %.1f ms, slowest %.1f ms, back on Redis %.0f ms after repair%n",
                    new Throwable().getStackTrace()[1].getMethodName(),
                    policy,
                    load.all().size(),
                    load.percentileMillis(99),
                    load.slowestMillis(),
                    (backOnRedis - repaired) / 1e6);
            return outage;
        }
    }

    private static RedisRateLimiter limiter(FailurePolicy policy) {
        return RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(BUDGET)
                .failurePolicy(policy)
                .denyCache(0) // every request should reach the limiter's Redis path
                .build();
    }

    private static Set<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .collect(Collectors.toSet());
    }

    private record Outage(Load load, long brokenNanos, long repairedNanos, long backOnRedisNanos) {

        /** Decisions asked while Redis was surely broken: from 100 ms after it broke until it was repaired. */
        List<Sample> during() {
            return load.between(brokenNanos + 100_000_000L, repairedNanos);
        }

        long outageNanos() {
            return repairedNanos - brokenNanos;
        }

        void assertEveryDecisionWithinBudgetAndNothingEscaped() {
            assertThat(load.escaped()).isEmpty();
            assertThat(load.slowestMillis()).isLessThanOrEqualTo(BUDGET.toMillis() + SLACK_MILLIS);
        }

        void assertBackOnRedisWithinAboutASecond() {
            assertThat(backOnRedisNanos)
                    .as("a decision made by Redis again after the repair")
                    .isPositive();
            assertThat((backOnRedisNanos - repairedNanos) / 1_000_000).isLessThan(1_500);
            List<Sample> after = load.between(backOnRedisNanos, Long.MAX_VALUE);
            assertThat(after).isNotEmpty();
            Decision last = after.get(after.size() - 1).decision();
            assertThat(last.degraded()).isFalse();
        }
    }
}
