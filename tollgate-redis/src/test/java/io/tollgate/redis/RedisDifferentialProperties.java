package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tollgate.CalendarQuota;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.fixtures.BucketGenerators;
import io.tollgate.fixtures.BucketGenerators.Step;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.fixtures.Seeds;
import io.tollgate.fixtures.SteppingTimeSource;
import io.tollgate.testing.RedisServer;
import java.time.Duration;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Redis limiter against the in-memory one, with the same clock: for random policies and random
 * sequences of requests and pauses, every decision is identical, field for field. Each case is a seed
 * ({@link Seeds}). Subclasses choose the Redis to run against.
 */
abstract class RedisDifferentialProperties {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    static final Duration PATIENT = Duration.ofSeconds(5);

    private static final AtomicLong KEYS = new AtomicLong();

    /** Returns the server to run against, started by the subclass. */
    abstract RedisServer server();

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("traces")
    void redisAndInMemoryGiveIdenticalDecisions(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Policy policy = generate.policy("p");
        List<Step> steps = generate.steps();
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);
        InMemoryRateLimiter memory =
                InMemoryRateLimiter.builder().timeSource(time).build();
        String key = "client-" + KEYS.incrementAndGet();

        try (RedisRateLimiter redis = redisLimiter(time)) {
            for (Step step : steps) {
                time.advanceMicros(step.advanceMicros());
                long cost = step.cost(policy);

                assertThat(redis.tryAcquire(key, policy, cost))
                        .as("cost %d after %d µs", cost, step.advanceMicros())
                        .isEqualTo(memory.tryAcquire(key, policy, cost));
            }
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("cases")
    void theyAgreeWhenThePolicyChangesBetweenRequests(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Policy before = generate.policy("p");
        Policy after = generate.policy("p");
        List<Step> steps = generate.steps();
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);
        InMemoryRateLimiter memory =
                InMemoryRateLimiter.builder().timeSource(time).build();
        String key = "client-" + KEYS.incrementAndGet();

        try (RedisRateLimiter redis = redisLimiter(time)) {
            for (Step step : steps) {
                time.advanceMicros(step.advanceMicros());
                Policy policy = step.pick(before, after);
                long cost = step.cost(policy);

                assertThat(redis.tryAcquire(key, policy, cost)).isEqualTo(memory.tryAcquire(key, policy, cost));
            }
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("cases")
    void theyAgreeWhenCallersReserveTokensAhead(long seed) throws InterruptedException {
        BucketGenerators generate = new BucketGenerators(seed);
        Policy policy = generate.policy("p");
        List<Step> steps = generate.steps();
        SteppingTimeSource redisTime = new SteppingTimeSource(1_700_000_000_000_000L);
        SteppingTimeSource memoryTime = new SteppingTimeSource(1_700_000_000_000_000L);
        InMemoryRateLimiter memory =
                InMemoryRateLimiter.builder().timeSource(memoryTime).build();
        String key = "client-" + KEYS.incrementAndGet();

        try (RedisRateLimiter redis = redisLimiter(redisTime)) {
            for (Step step : steps) {
                redisTime.advanceMicros(step.advanceMicros());
                memoryTime.advanceMicros(step.advanceMicros());
                long cost = step.cost(policy);
                Duration maxWait = Duration.of(step.advanceMicros(), ChronoUnit.MICROS);

                assertThat(redis.acquire(key, policy, cost, maxWait))
                        .isEqualTo(memory.acquire(key, policy, cost, maxWait));
                assertThat(redisTime.sleptMicros()).isEqualTo(memoryTime.sleptMicros());
            }
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("cases")
    void theyAgreeWhenCostsAreChargedAfterTheFactAndRefunded(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Random random = new Random(seed);
        Policy generated = generate.policy("p");
        // debts stay far below 2^53 ticks, the most a bucket counts, however many charges land
        assumeTrue(generated.limits().stream().allMatch(limit -> limit.fillTicks() < 1L << 44));
        long longestFill = Policy.defaultMaxDebt(generated.limits()).toNanos() / 1_000;
        // the maximum debt: the default (the longest fill), none, some, or more than exact arithmetic counts
        Policy policy = switch (random.nextInt(4)) {
            case 0 -> generated;
            case 1 -> generated.withMaxDebt(Duration.ZERO);
            case 2 -> generated.withMaxDebt(Duration.of(1 + random.nextLong(3 * longestFill), ChronoUnit.MICROS));
            default -> generated.withMaxDebt(Duration.ofDays(365_000));
        };
        List<Step> steps = generate.steps();
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);
        InMemoryRateLimiter memory =
                InMemoryRateLimiter.builder().timeSource(time).build();
        String key = "client-" + KEYS.incrementAndGet();

        // charges go through the batch script when batching is on, the one-decision script when it is off
        try (RedisRateLimiter redis = connect(RedisRateLimiter.builder())
                .timeout(PATIENT)
                .clientClock(time)
                .batching(random.nextBoolean())
                .build()) {
            for (Step step : steps) {
                time.advanceMicros(step.advanceMicros());
                long cost = step.cost(policy);
                switch (step.choice() % 4) {
                    case 0 -> {
                        long charge = cost * (1 + step.choice() % 5); // up to five times the capacity
                        assertThat(redis.charge(key, policy, charge))
                                .as("charge of %d", charge)
                                .isEqualTo(memory.charge(key, policy, charge));
                    }
                    case 1 -> {
                        cost *= 1 + step.choice() % 3; // refunds beyond the capacity, as charges may be
                        redis.refundAsync(key, policy, cost)
                                .toCompletableFuture()
                                .join();
                        memory.refundAsync(key, policy, cost)
                                .toCompletableFuture()
                                .join();
                        assertThat(redis.inspect(key, policy))
                                .as("after a refund of %d", cost)
                                .isEqualTo(memory.inspect(key, policy));
                    }
                    default ->
                        assertThat(redis.tryAcquire(key, policy, cost)).isEqualTo(memory.tryAcquire(key, policy, cost));
                }
            }
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("cases")
    void theyAgreeOnCalendarQuotasAcrossBoundariesAndDaylightSavingDays(long seed) {
        BucketGenerators generate = new BucketGenerators(seed);
        Random random = new Random(seed);
        ZoneId zone = List.of("UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe")
                .get(random.nextInt(5))
                .transform(ZoneId::of);
        CalendarQuota.Period period = random.nextBoolean() ? CalendarQuota.Period.HOUR : CalendarQuota.Period.DAY;
        Policy plain = generate.policy("q");
        Policy policy = plain.withQuota(CalendarQuota.of(plain.maxCost() + random.nextInt(12), period, zone));
        // start in the 12 hours around New York's autumn change (06:00 UTC on 1 November 2026: a 25-hour day,
        // 01:00 shown twice), with half-hour offsets (Kolkata, Lord Howe) and zones without a change then
        ManualTimeSource time = new ManualTimeSource(1_793_491_200_000_000L + random.nextLong(43_200_000_000L));
        InMemoryRateLimiter memory =
                InMemoryRateLimiter.builder().timeSource(time).build();
        String key = "quota-" + KEYS.incrementAndGet();

        try (RedisRateLimiter redis = redisLimiter(time)) {
            for (Step step : generate.steps()) {
                time.advanceMicros(
                        period == CalendarQuota.Period.HOUR
                                ? random.nextLong(20 * 60_000_000L)
                                : random.nextLong(5 * 3_600_000_000L));
                long cost = step.cost(policy);
                switch (step.choice() % 5) {
                    case 0 -> assertThat(redis.charge(key, policy, cost)).isEqualTo(memory.charge(key, policy, cost));
                    case 1 -> {
                        redis.refundAsync(key, policy, cost)
                                .toCompletableFuture()
                                .join();
                        memory.refundAsync(key, policy, cost)
                                .toCompletableFuture()
                                .join();
                    }
                    default ->
                        assertThat(redis.tryAcquire(key, policy, cost))
                                .as("cost %d at %d µs", cost, time.nowMicros())
                                .isEqualTo(memory.tryAcquire(key, policy, cost));
                }
            }
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("cases")
    void theyAgreeOnPermitsInFlight(long seed) {
        Random random = new Random(seed);
        ConcurrencyLimit limit = ConcurrencyLimit.of("in-flight-" + seed, 1 + random.nextInt(5));
        InMemoryRateLimiter memory = InMemoryRateLimiter.create();
        List<String> keys = List.of("a-" + KEYS.incrementAndGet(), "b-" + KEYS.incrementAndGet());
        List<Permit> heldInRedis = new ArrayList<>();
        List<Permit> heldInMemory = new ArrayList<>();

        try (RedisRateLimiter redis = redisLimiter(new ManualTimeSource(1_700_000_000_000_000L))) {
            for (int step = 0; step < 60; step++) {
                if (random.nextInt(3) > 0 || heldInRedis.isEmpty()) {
                    String key = keys.get(random.nextInt(keys.size()));
                    Permit inRedis = redis.tryAcquirePermit(key, limit);
                    Permit inMemory = memory.tryAcquirePermit(key, limit);

                    assertThat(List.of(inRedis.acquired(), inRedis.inFlight()))
                            .as("step %d, key %s", step, key)
                            .isEqualTo(List.of(inMemory.acquired(), inMemory.inFlight()));
                    heldInRedis.add(inRedis);
                    heldInMemory.add(inMemory);
                } else {
                    int which = random.nextInt(heldInRedis.size());
                    heldInRedis.remove(which).close();
                    heldInMemory.remove(which).close();
                }
            }
            for (String key : keys) {
                assertThat(redis.inFlight(key, limit)).isEqualTo(memory.inFlight(key, limit));
            }
        }
    }

    static LongStream traces() {
        return Seeds.of(40, 400);
    }

    static LongStream cases() {
        return Seeds.of(25, 250);
    }

    private RedisRateLimiter redisLimiter(io.tollgate.TimeSource time) {
        return connect(RedisRateLimiter.builder())
                .timeout(PATIENT)
                .clientClock(time)
                .build();
    }

    /** Points the builder at the Redis to run against: {@link #server()}, unless a subclass says otherwise. */
    RedisRateLimiter.Builder connect(RedisRateLimiter.Builder builder) {
        return builder.uri(server().uri());
    }
}
