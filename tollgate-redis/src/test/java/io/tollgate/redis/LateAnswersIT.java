package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Redis that is up but slower than the budget: a request whose budget runs out is still decided by Redis,
 * and that late answer is not thrown away. What the failure policy admitted is charged to Redis, what it
 * refused and Redis charged is given back, and what the instance knows of the key follows Redis.
 */
@Timeout(120)
@Isolated // alone on the machine: its bounds hold for a machine not busy with other tests
class LateAnswersIT {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Duration BUDGET = Duration.ofMillis(50);
    private static final Duration PATIENT = Duration.ofSeconds(5);

    /** Two tokens, refilled one per hour: nothing comes back during a test. */
    private static final Policy TWO_PER_HOUR = Policy.of("late", Limit.of(2, Rate.perHour(1)));

    private final List<RedisRateLimiter> limiters = new ArrayList<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @BeforeEach
    void healthyRedis() {
        redis.server().heal();
        redis.server().command("FLUSHALL");
    }

    @AfterEach
    void close() {
        redis.server().resume();
        limiters.forEach(RedisRateLimiter::close);
    }

    @Test
    void aRequestTheFallbackAdmittedIsChargedToRedisWhenItsLateAnswerRefusedIt() throws Exception {
        RedisRateLimiter patient = limiter(PATIENT, FailurePolicy.DENY, 1);
        RedisRateLimiter failingOpen = limiter(BUDGET, FailurePolicy.ALLOW, 1);
        patient.tryAcquire("alice", TWO_PER_HOUR, 2);

        Decision admitted = whileRedisSleeps(() -> failingOpen.tryAcquire("alice", TWO_PER_HOUR));

        assertThat(admitted.allowed()).isTrue();
        assertThat(admitted.degradation().cause()).isEqualTo(Degradation.Cause.TIMEOUT);
        await("the admitted request is charged to Redis", () -> tokensOwed("alice") == 3);
        assertThat(count("tollgate.fallback.over_limit")).isEqualTo(1);
        assertThat(patient.tryAcquire("alice", TWO_PER_HOUR).retryAfter())
                .as("the next token is due an hour later than without the charge")
                .isBetween(Duration.ofMinutes(119), Duration.ofMinutes(120));
    }

    @Test
    void aRequestTheFallbackRefusedGetsItsTokensBackWhenItsLateAnswerAllowedIt() throws Exception {
        RedisRateLimiter failingClosed = limiter(BUDGET, FailurePolicy.DENY, 1);

        Decision refused = whileRedisSleeps(() -> failingClosed.tryAcquire("bob", TWO_PER_HOUR));

        assertThat(refused.allowed()).isFalse();
        assertThat(refused.degraded()).isTrue();
        await("the tokens Redis took are given back", () -> redis.server().command("GET", bucket("bob")) == null);
        assertThat(count("tollgate.fallback.refunded")).isEqualTo(1);
        assertThat(failingClosed.tryAcquire("bob", TWO_PER_HOUR, 2).allowed())
                .as("the whole bucket is there again")
                .isTrue();
    }

    @Test
    void aRequestStillQueuedForABatchWhenItsBudgetRunsOutIsSentAndChargedOnce() throws Exception {
        RedisRateLimiter batching = limiter(BUDGET, FailurePolicy.ALLOW, 1);
        batching.tryAcquire("carol", TWO_PER_HOUR); // connected, scripts loaded
        redis.server().pause();
        List<CompletableFuture<Decision>> queued = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            queued.add(batching.tryAcquireAsync("carol", TWO_PER_HOUR, 1).toCompletableFuture());
        }
        List<Decision> decided = queued.stream().map(CompletableFuture::join).toList();
        redis.server().resume();

        assertThat(decided)
                .allSatisfy(decision -> assertThat(decision.degraded()).isTrue());
        await("all three reached Redis: one allowed, two refused and charged anyway", () -> tokensOwed("carol") == 4);
        assertThat(count("tollgate.fallback.over_limit")).isEqualTo(2);
    }

    @Test
    void theLocalFallbackRefusesAKeyThatRedisLastReportedEmptyWithTheRightRetryAfter() throws Exception {
        RedisRateLimiter limiter = limiter(BUDGET, FailurePolicy.LOCAL, 1);
        limiter.tryAcquire("dave", TWO_PER_HOUR, 2);
        Decision lastFromRedis = limiter.tryAcquire("eve", TWO_PER_HOUR);

        redis.server().kill(); // down: LOCAL decides on what Redis last said
        Decision emptyKey = limiter.tryAcquire("dave", TWO_PER_HOUR);
        Decision halfFullKey = limiter.tryAcquire("eve", TWO_PER_HOUR);
        Decision halfFullKeyAgain = limiter.tryAcquire("eve", TWO_PER_HOUR);
        Decision neverSeen = limiter.tryAcquire("frank", TWO_PER_HOUR, 2);

        assertThat(lastFromRedis.remaining()).isEqualTo(1);
        assertThat(emptyKey.degraded()).isTrue();
        assertThat(emptyKey.allowed()).isFalse();
        assertThat(emptyKey.retryAfter())
                .as("as Redis would answer: the next token in an hour")
                .isBetween(Duration.ofMinutes(59), Duration.ofMinutes(60));
        assertThat(halfFullKey.allowed()).as("the one token Redis reported").isTrue();
        assertThat(halfFullKeyAgain.allowed()).isFalse();
        assertThat(neverSeen.allowed()).as("a key never seen starts full").isTrue();
        redis.server().restart();
    }

    @Test
    void whileRedisIsLateTheLocalFallbackAdmitsNothingAndGivesBackWhatRedisAllowed() throws Exception {
        RedisRateLimiter limiter = limiter(BUDGET, FailurePolicy.LOCAL, 1);
        limiter.tryAcquire("dave", TWO_PER_HOUR, 2);
        limiter.tryAcquire("eve", TWO_PER_HOUR);

        redis.server().pause(); // frozen for less than the stall time: late, not down
        Decision emptyKey = limiter.tryAcquire("dave", TWO_PER_HOUR);
        Decision halfFullKey = limiter.tryAcquire("eve", TWO_PER_HOUR);
        Decision neverSeen = limiter.tryAcquire("frank", TWO_PER_HOUR);
        redis.server().resume();

        assertThat(List.of(emptyKey, halfFullKey, neverSeen))
                .allSatisfy(
                        decision -> assertThat(decision.degradation().cause()).isEqualTo(Degradation.Cause.TIMEOUT))
                .noneMatch(Decision::allowed);
        assertThat(emptyKey.degradation().fallback())
                .as("over its limit as Redis last said: refused as its bucket says")
                .isEqualTo(FailurePolicy.LOCAL);
        assertThat(emptyKey.retryAfter()).isBetween(Duration.ofMinutes(59), Duration.ofMinutes(60));
        assertThat(List.of(halfFullKey, neverSeen))
                .as("nothing Redis has not decided is admitted: refused as failing closed refuses")
                .allSatisfy(decision ->
                        assertThat(decision.degradation().fallback()).isEqualTo(FailurePolicy.DENY));
        await("Redis allowed both late: their tokens are given back", () -> count("tollgate.fallback.refunded") == 2);
        await("eve owes what she took before the freeze", () -> tokensOwed("eve") == 1);
        await("frank owes nothing", () -> tokensOwed("frank") == 0);
        assertThat(limiter.circuitState()).as("late is not down").isEqualTo("closed");
    }

    @Test
    void whatTheLocalFallbackAdmittedWhileRedisWasDownIsChargedOnceItIsBack() throws Exception {
        RedisRateLimiter limiter = limiter(BUDGET, FailurePolicy.LOCAL, 1);
        limiter.tryAcquire("grace", TWO_PER_HOUR);
        redis.server().kill();

        List<Boolean> duringOutage = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            duringOutage.add(limiter.tryAcquire("grace", TWO_PER_HOUR).allowed());
        }
        redis.server().restart();
        await(
                "Redis decides again",
                () -> !limiter.tryAcquire("someone-else", TWO_PER_HOUR).degraded());

        assertThat(duringOutage).containsExactly(true, false, false, false, false, false, false, false);
        await("the admission Redis never saw is charged to the restarted, empty Redis", () -> tokensOwed("grace") == 1);
        assertThat(limiter.tryAcquire("grace", TWO_PER_HOUR).allowed())
                .as("one token left of two")
                .isTrue();
        assertThat(limiter.tryAcquire("grace", TWO_PER_HOUR).allowed()).isFalse();
    }

    @Test
    void aKeyDrainedFromThreeInstancesWhileRedisIsSlowAdmitsNoMoreThanItsCapacityAndRefill() throws Exception {
        Policy policy = Policy.of("drained", Limit.of(600, Rate.perSecond(6)));
        List<RedisRateLimiter> instances = List.of(
                limiter(BUDGET, FailurePolicy.LOCAL, 3),
                limiter(BUDGET, FailurePolicy.LOCAL, 3),
                limiter(BUDGET, FailurePolicy.LOCAL, 3));
        instances.forEach(instance -> instance.tryAcquire("warm", policy));
        AtomicLong admitted = new AtomicLong();
        AtomicLong degraded = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> clients = new ArrayList<>();
        long start = System.nanoTime();
        for (RedisRateLimiter instance : instances) {
            for (int t = 0; t < 3; t++) {
                Thread client = new Thread(() -> {
                    while (!stop.get()) {
                        Decision decision = instance.tryAcquire("mallory", policy);
                        if (decision.allowed()) {
                            admitted.incrementAndGet();
                        }
                        if (decision.degraded()) {
                            degraded.incrementAndGet();
                        }
                        sleepMillis(15);
                    }
                });
                client.start();
                clients.add(client);
            }
        }
        sleepMillis(300);
        redis.server().command("DEBUG", "SLEEP", "0.03"); // slower, within the budget
        sleepMillis(200);
        redis.server().command("DEBUG", "SLEEP", "0.3"); // slower than the budget
        sleepMillis(200);
        redis.server().pause(); // frozen; the breakers open
        sleepMillis(400);
        redis.server().resume();
        sleepMillis(500);
        stop.set(true);
        for (Thread client : clients) {
            client.join();
        }
        long elapsedMicros = (System.nanoTime() - start) / 1_000;

        long refill = elapsedMicros * 6 / 1_000_000 + 1;
        System.out.printf(
                "drained from three instances: %d admitted (capacity 600, refill %d), %d degraded%n",
                admitted.get(), refill, degraded.get());
        assertThat(degraded.get()).as("the slow phases degraded decisions").isPositive();
        assertThat(admitted.get()).isLessThanOrEqualTo(600 + refill);
        // An answer from Redis for every instance, which sends what it owed Redis (charges decided while Redis
        // could not be asked go once Redis answers the instance again): a request for the whole capacity, which
        // a drained bucket refuses and which no deny cache answers, as none has refused it yet.
        for (int pass = 0; pass < 2; pass++) {
            for (RedisRateLimiter instance : instances) {
                assertThat(instance.tryAcquire("mallory", policy, 600).allowed())
                        .isFalse();
            }
        }
        awaitKnowledgeMatchesRedis(instances, policy, "mallory");
    }

    @Test
    void lateAnswersAloneBringWhatAnInstanceKnowsBackToRedisState() throws Exception {
        RedisRateLimiter limiter = limiter(BUDGET, FailurePolicy.DENY, 1);
        RedisRateLimiter other = limiter(PATIENT, FailurePolicy.DENY, 1);
        limiter.tryAcquire("heidi", TWO_PER_HOUR); // it knows of one token left
        other.tryAcquire("heidi", TWO_PER_HOUR); // which another instance takes

        redis.server().pause();
        Decision whileFrozen = limiter.tryAcquire("heidi", TWO_PER_HOUR);
        sleepMillis(100);
        redis.server().resume();

        assertThat(whileFrozen.degraded()).isTrue();
        awaitKnowledgeMatchesRedis(List.of(limiter), TWO_PER_HOUR, "heidi");
        assertThat(limiter.guard().cachedRefusalMicros(TWO_PER_HOUR, "heidi", 1))
                .as("Redis refused the late request: the refusal is remembered")
                .isPositive();
    }

    /**
     * Waits until every instance's knowledge of the key says its bucket is full again when Redis's key
     * expires (Redis keeps a bucket exactly until it is full), within a few milliseconds.
     */
    private static void awaitKnowledgeMatchesRedis(List<RedisRateLimiter> instances, Policy policy, String key)
            throws Exception {
        await("each instance knows the bucket as Redis holds it", () -> {
            long ttlMillis = (Long) redis.server().command("PTTL", "tollgate:" + policy.name() + ":" + key);
            return instances.stream().allMatch(instance -> {
                long untilFull = instance.guard().knownUntilFullMicros(policy, key);
                return Math.abs(untilFull / 1_000 - ttlMillis) <= 20;
            });
        });
    }

    private <T> T whileRedisSleeps(java.util.function.Supplier<T> action) throws Exception {
        CompletableFuture<?> sleeping =
                CompletableFuture.runAsync(() -> redis.server().command("DEBUG", "SLEEP", "0.3"));
        sleepMillis(50);
        T result = action.get();
        sleeping.join();
        return result;
    }

    private RedisRateLimiter limiter(Duration budget, FailurePolicy onFailure, int expectedInstances) {
        RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(budget)
                .failurePolicy(onFailure)
                .expectedInstances(expectedInstances)
                .metrics(MicrometerMetrics.of(registry))
                .build();
        limiters.add(limiter);
        return limiter;
    }

    /** Returns how many tokens the bucket owes: whole tokens taken from it and not yet refilled. */
    private static long tokensOwed(String key) {
        Object stored = redis.server().command("GET", bucket(key));
        if (stored == null) {
            return 0;
        }
        String[] parts = ((String) stored).split("\\|");
        long debtMicros = Long.parseLong(parts[2]) - (redis.server().timeMicros() - Long.parseLong(parts[0]));
        return (debtMicros + 3_599_999_999L) / 3_600_000_000L; // a token per hour, a tick per microsecond
    }

    private static String bucket(String key) {
        return "tollgate:" + TWO_PER_HOUR.name() + ":" + key;
    }

    private double count(String name) {
        Counter counter = registry.find(name).counter();
        return counter == null ? 0 : counter.count();
    }

    private static void await(String what, BooleanSupplier condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    private static void sleepMillis(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
