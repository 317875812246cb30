package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.CalendarQuota;
import io.tollgate.Decision;
import io.tollgate.DecisionEvent;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leases: a hot key's requests answered from tokens taken from Redis ahead, never more than Redis granted, given
 * back when the key cools or changes, with few Redis calls.
 *
 * <p>The limiters run on a clock the test moves ({@link RedisLimiterSettings#clientClock}, Redis then decides on
 * it too): whether a key is hot, how large a slice is and when it expires are counted on that clock, so what each
 * test claims holds whether the machine decides ten thousand requests a second or half a million. On the
 * machine's clock, a fast machine answered a test's ten thousand requests within the first window of 100 ms,
 * before the key's rate was known, and no slice was taken.
 */
class LeasesIT {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    private static final Duration PATIENT = Duration.ofSeconds(5);

    /** A bucket that hardly refills while a test runs: what it holds tells exactly what was taken. */
    private static final Policy HOT = Policy.of("hot", Limit.of(20_000, Rate.perHour(1)));

    /** Requests at ten thousand a second on the test's clock: a slice is a thousand tokens. */
    private static final long EVERY_MICROS = 100;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final ManualTimeSource clock = new ManualTimeSource(1_700_000_000_000_000L);

    @BeforeEach
    void flush() {
        redis.server().command("FLUSHALL");
    }

    @Test
    void answersAHotKeyFromLeasesWithAFewRedisCallsPerThousandDecisions() throws Exception {
        Policy plenty = Policy.of("plenty", Limit.of(1_000_000_000, Rate.perSecond(1)));
        try (RedisRateLimiter limiter = leasing("plenty")) {
            decide(limiter, plenty, "alice", 20_000, 10); // 100 000 a second for 200 ms: hot, and leased
            long callsBefore = redis.server().commandCalls("evalsha");

            long admitted = decide(limiter, plenty, "alice", 100_000, 10);

            long calls = redis.server().commandCalls("evalsha") - callsBefore;
            assertThat(admitted).isEqualTo(100_000);
            assertThat(calls * 1_000 / 100_000)
                    .as("Redis calls per 1 000 decisions")
                    .isLessThanOrEqualTo(10);
        }
    }

    @Test
    void threeLimitersOfThirtyTwoThreadsAdmitExactlyWhatRedisGranted() throws Exception {
        // Large enough that the key is leased for a while (a slice comes after a window of 100 ms on the clock, which
        // each request moves by 10 µs: about 10 000 requests), then emptied
        Policy shared = Policy.of("hot", Limit.of(40_000, Rate.perHour(1)));
        List<RedisRateLimiter> limiters = List.of(leasing("hot"), leasing("hot"), leasing("hot"));
        ExecutorService threads = Executors.newFixedThreadPool(96);
        AtomicLong admitted = new AtomicLong();
        AtomicLong leased = new AtomicLong();
        limiters.forEach(limiter -> limiter.onDecision(event -> {
            if (event.source().equals(DecisionEvent.LEASE)) {
                leased.incrementAndGet();
            }
        }));
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int thread = 0; thread < 96; thread++) {
                RedisRateLimiter limiter = limiters.get(thread % 3);
                running.add(threads.submit(() -> {
                    for (int i = 0; i < 600; i++) {
                        clock.advanceMicros(10);
                        Decision decision = limiter.tryAcquire("alice", shared);
                        if (decision.allowed()) {
                            admitted.incrementAndGet();
                        }
                    }
                }));
            }
            for (Future<?> done : running) {
                done.get(60, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
            limiters.forEach(RedisRateLimiter::close); // gives back what the leases hold
        }

        try (RedisRateLimiter reader = leasing()) {
            long left = reader.inspect("alice", shared).tokens();
            assertThat(admitted.get()).as("admitted").isLessThanOrEqualTo(40_000);
            assertThat(left).as("Redis holds what was not admitted").isEqualTo(40_000 - admitted.get());
        }
        assertThat(leased.get()).as("decisions answered from leases").isPositive();
    }

    @Test
    void givesBackWhatALeaseHoldsOnceTheKeyCools() throws Exception {
        try (RedisRateLimiter limiter = leasing("hot")) {
            long admitted = decide(limiter, HOT, "bob", 3_000, EVERY_MICROS);
            assertThat(limiter.guard().leaseSlicesTaken()).isPositive();

            // The key cools: past a slice's life on the clock, the sweep gives back what the lease holds
            clock.advance(Duration.ofMillis(250));
            await(() -> limiter.guard().leasedTokens(HOT, "bob") == 0);

            await(() -> limiter.inspect("bob", HOT).tokens() == 20_000 - admitted);
            assertThat(limiter.inspect("bob", HOT).tokens()).isEqualTo(20_000 - admitted);
        }
    }

    @Test
    void aResetDropsTheLeasesOfEveryInstanceBeforeItAnswers() throws Exception {
        try (RedisRateLimiter operator = leasing("hot");
                RedisRateLimiter server = leasing("hot")) {
            awaitInstances(List.of(operator, server));
            untilASliceIsTaken(server, HOT, "carol", EVERY_MICROS);
            // The clock stands still from here: the slice, of 1 000 less at most a round of requests, stays leased
            assertThat(server.guard().leasedTokens(HOT, "carol"))
                    .as("tokens leased")
                    .isPositive();

            Propagation propagation = operator.reset("carol", HOT);

            assertThat(propagation.unconfirmed()).isEmpty();
            assertThat(server.guard().leasedTokens(HOT, "carol"))
                    .as("the other instance's lease, when the reset answers")
                    .isZero();
            await(() -> operator.inspect("carol", HOT).tokens() == 20_000);
        }
    }

    /**
     * Every instance sharing a hot key leases it, and a slice is never more than the instance's share of half the
     * bucket, counted by the live instances Redis knows of: the first instance's requests come fast enough for a
     * slice of 20 000, over its share.
     */
    @ParameterizedTest(name = "{0} live instances")
    @ValueSource(ints = {2, 3})
    void everyLiveInstanceLeasesAHotKeyWithinItsShareOfHalfTheBucket(int count) throws Exception {
        Policy shared = Policy.of("hot", Limit.of(60_000, Rate.perHour(1)));
        List<RedisRateLimiter> instances = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            instances.add(leasing("hot"));
        }
        AtomicLong fromLease = new AtomicLong();
        instances.get(0).onDecision(event -> {
            if (event.source().equals(DecisionEvent.LEASE)) {
                fromLease.incrementAndGet();
            }
        });
        long admitted = 0;
        try {
            awaitInstances(instances);
            RedisRateLimiter first = instances.get(0);

            long firstAdmitted = untilASliceIsTaken(first, shared, "heidi", 5); // 200 000 a second

            assertThat(first.guard().leaseSlicesTaken()).as("slices taken").isEqualTo(1);
            long decidedByRedis = firstAdmitted - fromLease.get();
            long slice = 60_000 - first.inspect("heidi", shared).tokens() - decidedByRedis;
            assertThat(slice)
                    .as("the slice: 60 000 / (2 × %d live instances)", count)
                    .isEqualTo(60_000 / (2 * count));
            admitted += firstAdmitted;
            for (RedisRateLimiter other : instances.subList(1, count)) {
                admitted += untilASliceIsTaken(other, shared, "heidi", EVERY_MICROS);
                assertThat(other.guard().leaseSlicesTaken())
                        .as("slices taken by another")
                        .isPositive();
            }
        } finally {
            instances.forEach(RedisRateLimiter::close); // gives back what the leases hold
        }

        try (RedisRateLimiter reader = leasing()) {
            assertThat(reader.inspect("heidi", shared).tokens())
                    .as("Redis holds what was not admitted")
                    .isEqualTo(60_000 - admitted);
        }
    }

    @Test
    void aKeyBelowTheHotRateIsDecidedByRedisEachTime() {
        try (RedisRateLimiter limiter = leasing("hot")) {
            for (int i = 0; i < 300; i++) {
                assertThat(limiter.tryAcquire("dave", HOT).remaining()).isEqualTo(20_000 - 1 - i);
                clock.advanceMicros(2_000); // 500 a second: half the hot rate
            }

            assertThat(limiter.guard().leaseSlicesTaken()).isZero();
        }
    }

    @Test
    void policiesThatAreNotNamedOrHaveCalendarQuotasAreNeverLeased() throws Exception {
        Policy other = Policy.of("other", Limit.of(20_000, Rate.perHour(1)));
        Policy monthly = new Policy(
                "monthly",
                List.of(Limit.of(20_000, Rate.perHour(1))),
                List.of(CalendarQuota.of(1_000_000, CalendarQuota.Period.MONTH, ZoneOffset.UTC)),
                Duration.ZERO);
        try (RedisRateLimiter limiter = leasing("hot", "monthly")) {
            decide(limiter, other, "erin", 3_000, EVERY_MICROS);
            decide(limiter, monthly, "erin", 3_000, EVERY_MICROS);

            assertThat(limiter.guard().leaseSlicesTaken()).isZero();
        }
    }

    /**
     * Asks {@code count} times, 64 at a time, the clock moving {@code everyMicros} before each; returns how many
     * were admitted.
     */
    private long decide(RedisRateLimiter limiter, Policy policy, String key, int count, long everyMicros)
            throws InterruptedException {
        Semaphore slots = new Semaphore(64);
        AtomicLong admitted = new AtomicLong();
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            slots.acquire();
            clock.advanceMicros(everyMicros);
            CompletableFuture<?> decided = limiter.tryAcquireAsync(key, policy, 1)
                    .toCompletableFuture()
                    .whenComplete((decision, failure) -> {
                        if (decision != null && decision.allowed()) {
                            admitted.incrementAndGet();
                        }
                        slots.release();
                    });
            all.add(decided);
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        return admitted.get();
    }

    /**
     * Asks in rounds of 100, the clock moving {@code everyMicros} before each request, until the limiter has taken a
     * slice (at most 100 000 requests); returns how many were admitted.
     */
    private long untilASliceIsTaken(RedisRateLimiter limiter, Policy policy, String key, long everyMicros)
            throws InterruptedException {
        long admitted = 0;
        for (int round = 0; round < 1_000 && limiter.guard().leaseSlicesTaken() == 0; round++) {
            admitted += decide(limiter, policy, key, 100, everyMicros);
        }
        assertThat(limiter.guard().leaseSlicesTaken()).as("slices taken").isPositive();
        return admitted;
    }

    private RedisRateLimiter leasing(String... policies) {
        return RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(PATIENT)
                .clientClock(clock)
                .leases(policies)
                .build();
    }

    /** Waits until each limiter counts them all live: a slice's size is its share of the live instances. */
    private static void awaitInstances(List<RedisRateLimiter> limiters) throws InterruptedException {
        await(() -> limiters.stream().allMatch(limiter -> limiter.instances() == limiters.size()));
    }

    /**
     * Waits for what the limiters do on threads of their own (a sweep, a slice or a give-back on its way, an
     * announcement); 30 s, which no busy machine outlasts, as the condition does not depend on how fast it is.
     */
    private static void await(BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(condition.getAsBoolean()).as("within 30 s").isTrue();
    }
}
