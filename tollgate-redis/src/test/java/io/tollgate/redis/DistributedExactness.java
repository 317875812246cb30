package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Several independent limiter instances (each with its own connection, as separate servers would have)
 * hammer shared keys from many threads on Redis time; afterwards no key may have admitted more than
 * capacity + rate × elapsed, where elapsed is measured on Redis's clock around the whole run.
 */
final class DistributedExactness {

    /** What one run admitted, per key, and the bound each key had to respect. */
    record Result(long[] admitted, long[] bound, long requests) {

        long totalAdmitted() {
            long total = 0;
            for (long a : admitted) {
                total += a;
            }
            return total;
        }

        long totalBound() {
            long total = 0;
            for (long b : bound) {
                total += b;
            }
            return total;
        }

        void assertNoKeyExceedsItsBound() {
            for (int k = 0; k < admitted.length; k++) {
                assertThat(admitted[k]).as("admitted for key %d", k).isLessThanOrEqualTo(bound[k]);
            }
        }

        String report(String what) {
            return String.format(
                    "%s: %d requests, %d admitted of a bound of %d (%.1f %%)",
                    what, requests, totalAdmitted(), totalBound(), 100.0 * totalAdmitted() / totalBound());
        }
    }

    private DistributedExactness() {}

    /**
     * Runs {@code threadsPerInstance} threads on each of the limiters from {@code instances} for {@code
     * duration}, each asking for random keys among {@code keys}.
     *
     * @param redisMicros reads Redis's clock, in microseconds
     */
    static Result run(
            Supplier<RedisRateLimiter> instances,
            int instanceCount,
            int threadsPerInstance,
            Policy policy,
            int keys,
            Duration duration,
            LongSupplier redisMicros)
            throws Exception {
        List<RedisRateLimiter> limiters = new ArrayList<>();
        for (int i = 0; i < instanceCount; i++) {
            limiters.add(instances.get());
        }
        ExecutorService pool = Executors.newFixedThreadPool(instanceCount * threadsPerInstance);
        AtomicLongArray admitted = new AtomicLongArray(keys);
        AtomicBoolean stop = new AtomicBoolean();
        long[] requests = new long[1];
        try {
            long start = redisMicros.getAsLong();
            List<Future<Long>> workers = new ArrayList<>();
            for (RedisRateLimiter limiter : limiters) {
                for (int t = 0; t < threadsPerInstance; t++) {
                    workers.add(pool.submit(() -> {
                        long asked = 0;
                        while (!stop.get()) {
                            int key = ThreadLocalRandom.current().nextInt(keys);
                            asked++;
                            if (limiter.tryAcquire("key-" + key, policy).allowed()) {
                                admitted.incrementAndGet(key);
                            }
                        }
                        return asked;
                    }));
                }
            }
            TimeUnit.NANOSECONDS.sleep(duration.toNanos());
            stop.set(true);
            for (Future<Long> worker : workers) {
                requests[0] += worker.get(30, TimeUnit.SECONDS);
            }
            long elapsedMicros = redisMicros.getAsLong() - start;
            long[] perKey = new long[keys];
            long[] bound = new long[keys];
            var limit = policy.limits().get(0);
            long refilled = elapsedMicros
                    * limit.refill().tokens()
                    * 1_000
                    / limit.refill().period().toNanos();
            for (int k = 0; k < keys; k++) {
                perKey[k] = admitted.get(k);
                bound[k] = limit.capacity() + refilled;
            }
            return new Result(perKey, bound, requests[0]);
        } finally {
            stop.set(true);
            pool.shutdownNow();
            limiters.forEach(RedisRateLimiter::close);
        }
    }
}
