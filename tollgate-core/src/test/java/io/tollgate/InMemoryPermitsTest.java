package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Concurrency limits in memory: permits taken and given back, never more open than the limit allows. */
class InMemoryPermitsTest {

    private final ConcurrencyLimit exports = ConcurrencyLimit.of("exports", 2);
    private final InMemoryRateLimiter limiter = InMemoryRateLimiter.create();

    @Test
    void refusesAPermitWhenEverySlotIsTakenAndGrantsItOnceOneIsGivenBack() {
        Permit first = limiter.tryAcquirePermit("customer-42", exports);
        Permit second = limiter.tryAcquirePermit("customer-42", exports);
        Permit third = limiter.tryAcquirePermit("customer-42", exports);
        first.close();
        Permit fourth = limiter.tryAcquirePermit("customer-42", exports);

        assertThat(List.of(first.acquired(), second.acquired(), third.acquired(), fourth.acquired()))
                .containsExactly(true, true, false, true);
        assertThat(List.of(first.inFlight(), second.inFlight(), third.inFlight(), fourth.inFlight()))
                .containsExactly(1, 2, 2, 2);
        assertThat(third.degraded()).isFalse();
        assertThat(limiter.inFlight("customer-42", exports)).isEqualTo(2);
    }

    @Test
    void closingIsIdempotentAndARefusedPermitGivesNothingBack() {
        Permit held = limiter.tryAcquirePermit("k", exports);
        limiter.tryAcquirePermit("k", exports);
        Permit refused = limiter.tryAcquirePermit("k", exports);

        refused.close();
        held.close();
        held.close();
        held.releaseAsync().toCompletableFuture().join();

        assertThat(limiter.inFlight("k", exports)).isEqualTo(1);
    }

    @Test
    void eachKeyAndEachLimitNameHasSlotsOfItsOwn() {
        try (Permit a = limiter.tryAcquirePermit("a", exports);
                Permit a2 = limiter.tryAcquirePermit("a", exports);
                Permit b = limiter.tryAcquirePermit("b", exports);
                Permit other = limiter.tryAcquirePermit("a", ConcurrencyLimit.of("imports", 1))) {
            assertThat(List.of(a.acquired(), a2.acquired(), b.acquired(), other.acquired()))
                    .containsOnly(true);
        }
        assertThat(limiter.inFlight("a", exports)).isZero();
    }

    @Test
    void tryWithResourcesGivesTheSlotBackWhateverHappens() {
        assertThatThrownBy(() -> {
                    try (Permit permit = limiter.tryAcquirePermit("k", exports)) {
                        throw new IllegalStateException("the export failed " + permit.inFlight());
                    }
                })
                .hasMessage("the export failed 1");

        assertThat(limiter.inFlight("k", exports)).isZero();
    }

    @Test
    void neverMoreInFlightThanTheLimitUnderManyThreads() throws Exception {
        ConcurrencyLimit five = ConcurrencyLimit.of("five", 5);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(32);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 32; t++) {
            workers.add(threads.submit(() -> {
                start.await();
                for (int i = 0; i < 500; i++) {
                    try (Permit permit = limiter.tryAcquirePermit("hot", five)) {
                        if (permit.acquired()) {
                            most.accumulateAndGet(running.incrementAndGet(), Math::max);
                            served.incrementAndGet();
                            if (ThreadLocalRandom.current().nextInt(4) == 0) {
                                Thread.onSpinWait();
                            }
                            running.decrementAndGet();
                        }
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        threads.shutdown();

        assertThat(most.get()).isLessThanOrEqualTo(5).isPositive();
        assertThat(served.get()).isPositive();
        assertThat(limiter.inFlight("hot", five)).isZero();
    }

    @Test
    void aLimitIsCheckedWhereItIsMade() {
        assertThatThrownBy(() -> ConcurrencyLimit.of("exports", 0))
                .hasMessage("concurrency limit 'exports': max in flight must be 1 to 100000, was 0");
        assertThatThrownBy(() -> ConcurrencyLimit.of("a b", 1))
                .hasMessage("invalid concurrency limit name 'a b': use 1 to 64 letters, digits, '_', '-' or '.'");
        assertThatThrownBy(() -> exports.withLease(Duration.ofMillis(500)))
                .hasMessage("concurrency limit 'exports': the lease must be whole milliseconds from 1 s to 1 day,"
                        + " was PT0.5S");
        assertThatThrownBy(() -> limiter.tryAcquirePermit("", exports)).hasMessage("key must not be empty");
        assertThat(exports.lease()).isEqualTo(Duration.ofSeconds(30));
    }
}
