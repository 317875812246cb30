package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.CalendarQuota;
import io.tollgate.Decision;
import io.tollgate.DecisionEvent;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import io.tollgate.Rate;
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

/**
 * Leases: a hot key's requests answered from tokens taken from Redis ahead, never more than Redis granted, given
 * back when the key cools or changes, with few Redis calls.
 */
class LeasesIT {

    /** Not a test of failures: a budget that a busy machine cannot blow, so no decision degrades. */
    private static final Duration PATIENT = Duration.ofSeconds(5);

    /** A bucket that hardly refills while a test runs: what it holds tells exactly what was taken. */
    private static final Policy HOT = Policy.of("hot", Limit.of(20_000, Rate.perHour(1)));

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @BeforeEach
    void flush() {
        redis.server().command("FLUSHALL");
    }

    @Test
    void answersAHotKeyFromLeasesWithAFewRedisCallsPerThousandDecisions() throws Exception {
        Policy plenty = Policy.of("plenty", Limit.of(1_000_000_000, Rate.perSecond(1)));
        try (RedisRateLimiter limiter = leasing("plenty")) {
            decide(limiter, plenty, "alice", 20_000, 64); // the key becomes hot, and leased
            long callsBefore = redis.server().commandCalls("evalsha");

            long admitted = decide(limiter, plenty, "alice", 100_000, 64);

            long calls = redis.server().commandCalls("evalsha") - callsBefore;
            assertThat(admitted).isEqualTo(100_000);
            assertThat(calls * 1_000 / 100_000)
                    .as("Redis calls per 1 000 decisions")
                    .isLessThanOrEqualTo(10);
        }
    }

    @Test
    void threeLimitersOfThirtyTwoThreadsAdmitExactlyWhatRedisGranted() throws Exception {
        // Large enough that the key is leased for a while (a slice comes after a window of 100 ms), then emptied
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
            long admitted = decide(limiter, HOT, "bob", 8_000, 64);
            assertThat(limiter.guard().leaseSlicesTaken()).isPositive();

            await(() -> limiter.guard().leasedTokens(HOT, "bob") == 0, Duration.ofSeconds(5));

            await(() -> limiter.inspect("bob", HOT).tokens() == 20_000 - admitted, Duration.ofSeconds(5));
            assertThat(limiter.inspect("bob", HOT).tokens()).isEqualTo(20_000 - admitted);
        }
    }

    @Test
    void aResetDropsTheLeasesOfEveryInstanceBeforeItAnswers() throws Exception {
        try (RedisRateLimiter operator = leasing("hot");
                RedisRateLimiter server = leasing("hot")) {
            await(() -> operator.instances() == 2 && server.instances() == 2, Duration.ofSeconds(10));
            // A slice lives 100 ms: ask until the server holds one, then reset at once (read once: on a busy
            // machine a second read may come after the slice's end, when the sweep gave it back)
            long held = 0;
            for (int round = 0; round < 20 && held == 0; round++) {
                decide(server, HOT, "carol", 500, 64);
                held = server.guard().leasedTokens(HOT, "carol");
            }
            assertThat(held)
                    .as(
                            "tokens leased after 20 rounds of 500 decisions (%d slices taken)",
                            server.guard().leaseSlicesTaken())
                    .isPositive();

            Propagation propagation = operator.reset("carol", HOT);

            assertThat(propagation.unconfirmed()).isEmpty();
            assertThat(server.guard().leasedTokens(HOT, "carol"))
                    .as("the other instance's lease, when the reset answers")
                    .isZero();
            await(() -> operator.inspect("carol", HOT).tokens() == 20_000, Duration.ofSeconds(5));
        }
    }

    @Test
    void aKeyBelowTheHotRateIsDecidedByRedisEachTime() {
        try (RedisRateLimiter limiter = leasing("hot")) {
            for (int i = 0; i < 50; i++) {
                assertThat(limiter.tryAcquire("dave", HOT).remaining()).isEqualTo(20_000 - 1 - i);
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
            decide(limiter, other, "erin", 8_000, 64);
            decide(limiter, monthly, "erin", 8_000, 64);

            assertThat(limiter.guard().leaseSlicesTaken()).isZero();
        }
    }

    /** Asks {@code count} times, {@code inFlight} at a time, and returns how many were admitted. */
    private static long decide(RedisRateLimiter limiter, Policy policy, String key, int count, int inFlight)
            throws InterruptedException {
        Semaphore slots = new Semaphore(inFlight);
        AtomicLong admitted = new AtomicLong();
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            slots.acquire();
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

    private static RedisRateLimiter leasing(String... policies) {
        return RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(PATIENT)
                .leases(policies)
                .build();
    }

    private static void await(BooleanSupplier condition, Duration within) throws InterruptedException {
        long until = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(condition.getAsBoolean()).as("within %s", within).isTrue();
    }
}
