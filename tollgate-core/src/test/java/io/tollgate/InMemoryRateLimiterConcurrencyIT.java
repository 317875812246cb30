package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.ManualTimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many threads hammer the in-memory limiter while a driver moves a manual clock forward in steps. After
 * every step, the threads keep asking until each has been refused at least once, so every token that step
 * made available is taken. The number admitted must then be exactly what a single-threaded reference
 * computes: not one more, not one fewer.
 */
@Timeout(60)
class InMemoryRateLimiterConcurrencyIT {

    private static final int THREADS = 8;
    private static final int STEPS = 200;

    private final ExecutorService pool = Executors.newFixedThreadPool(THREADS);

    @AfterEach
    void stopThreads() {
        pool.shutdownNow();
    }

    @Test
    void eightThreadsOnOneKeyAdmitExactlyCapacityPlusRefill() throws Exception {
        Policy policy = Policy.of("hot", Limit.of(100, Rate.perSecond(1_000)));

        long admitted = hammer(policy, 1, Duration.ofMillis(7))[0];

        assertThat(admitted).isEqualTo(100 + STEPS * 7);
    }

    @Test
    void eightThreadsOnOneKeyAdmitExactlyWhatAPolicyOfSeveralLimitsAllows() throws Exception {
        Policy policy = Policy.of(
                "layered",
                Limit.of(50, Rate.perSecond(300)),
                Limit.of(400, Rate.perSecond(100)),
                Limit.of(20, Rate.of(7, Duration.ofMillis(3))));

        long admitted = hammer(policy, 1, Duration.ofMillis(13))[0];

        assertThat(admitted).isEqualTo(expectedAdmitted(policy, Duration.ofMillis(13)));
    }

    @Test
    void eightThreadsOverManyKeysAdmitExactlyCapacityPlusRefillPerKey() throws Exception {
        Policy policy = Policy.of("spread", Limit.of(3, Rate.perSecond(200)));

        long[] admitted = hammer(policy, 200, Duration.ofMillis(10));

        assertThat(admitted).containsOnly(3 + STEPS * 2);
    }

    @Test
    void droppingFullBucketsWhileThreadsChargeThemLosesNoCharge() throws Exception {
        Policy policy = Policy.of("refilled", Limit.of(5, Rate.perSecond(1_000)));

        long[] admitted = hammer(policy, 20, Duration.ofMillis(10), true);

        assertThat(admitted).containsOnly(5 * (STEPS + 1));
    }

    private long[] hammer(Policy policy, int keys, Duration step) throws Exception {
        return hammer(policy, keys, step, false);
    }

    /**
     * Runs THREADS threads that call tryAcquire on random keys of {@code keys} while the clock advances
     * STEPS times by {@code step}; returns the number admitted per key. With {@code sweepEveryStep}, the
     * driver also sweeps idle buckets away after every step.
     */
    private long[] hammer(Policy policy, int keys, Duration step, boolean sweepEveryStep) throws Exception {
        ManualTimeSource time = new ManualTimeSource(1_000_000L);
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        AtomicLongArray admitted = new AtomicLongArray(keys);
        // refusedAt[thread * keys + key]: the last step in which that thread was refused on that key
        AtomicLongArray refusedAt = new AtomicLongArray(THREADS * keys);
        for (int i = 0; i < refusedAt.length(); i++) {
            refusedAt.set(i, -1);
        }
        AtomicInteger phase = new AtomicInteger();
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            workers.add(pool.submit(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (phase.get() <= STEPS) {
                    int key = random.nextInt(keys);
                    int before = phase.get();
                    if (limiter.tryAcquire("key-" + key, policy).allowed()) {
                        admitted.incrementAndGet(key);
                    } else {
                        refusedAt.set(thread * keys + key, before);
                    }
                }
            }));
        }
        for (int p = 0; p < STEPS; p++) {
            awaitAllRefused(refusedAt, p, workers);
            time.advance(step);
            phase.incrementAndGet();
            if (sweepEveryStep) {
                limiter.cleanUp(); // races with the workers charging the buckets that just filled up
            }
        }
        awaitAllRefused(refusedAt, STEPS, workers);
        phase.incrementAndGet();
        for (Future<?> worker : workers) {
            worker.get(10, TimeUnit.SECONDS);
        }
        long[] result = new long[keys];
        for (int k = 0; k < keys; k++) {
            result[k] = admitted.get(k);
        }
        return result;
    }

    /** Waits until every thread has been refused on every key during step {@code phase}. */
    private static void awaitAllRefused(AtomicLongArray refusedAt, int phase, List<Future<?>> workers)
            throws InterruptedException {
        for (int i = 0; i < refusedAt.length(); i++) {
            while (refusedAt.get(i) < phase) {
                for (Future<?> worker : workers) {
                    assertThat(worker.isDone()).as("a worker stopped early").isFalse();
                }
                Thread.sleep(0, 100_000);
            }
        }
    }

    /** Drains the policy after each step, single-threaded, with the reference model. */
    private static long expectedAdmitted(Policy policy, Duration step) {
        long now = 1_000_000L;
        ReferenceModel model = new ReferenceModel(policy, now);
        long admitted = 0;
        for (int p = 0; p <= STEPS; p++) {
            while (model.tryAcquire(now, 1).allowed()) {
                admitted++;
            }
            now += step.toNanos() / 1_000;
        }
        return admitted;
    }
}
