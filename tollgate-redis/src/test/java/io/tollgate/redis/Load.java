package io.tollgate.redis;

import io.tollgate.Decision;
import io.tollgate.Policy;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * Threads that ask a limiter for decisions without pause, recording each decision with when it was asked
 * and how long it took, and every throwable that escaped. For fault tests: break Redis while it runs.
 */
final class Load implements AutoCloseable {

    /** One decision: asked at {@code startNanos} (System.nanoTime), answered {@code tookNanos} later. */
    record Sample(String key, long startNanos, long tookNanos, Decision decision) {}

    private final Queue<Sample> samples = new ConcurrentLinkedQueue<>();
    private final Queue<Throwable> escaped = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();

    Load(RedisRateLimiter limiter, Policy policy, int threadCount, int keys) {
        for (int t = 0; t < threadCount; t++) {
            Thread thread = new Thread(
                    () -> {
                        while (!stop.get()) {
                            String key = "client-" + ThreadLocalRandom.current().nextInt(keys);
                            long start = System.nanoTime();
                            try {
                                Decision decision = limiter.tryAcquire(key, policy);
                                samples.add(new Sample(key, start, System.nanoTime() - start, decision));
                            } catch (Throwable thrown) {
                                escaped.add(thrown);
                            }
                            // a client that keeps asking, not a benchmark: leave the cores to Redis too
                            pause(200);
                        }
                    },
                    "load-" + t);
            thread.start();
            threads.add(thread);
        }
    }

    /** Waits until a decision asked after {@code sinceNanos} matches, or the timeout passes; returns when. */
    long awaitFirst(long sinceNanos, Predicate<Decision> matching, long timeoutMillis) {
        return awaitFirstSample(sinceNanos, sample -> matching.test(sample.decision), timeoutMillis);
    }

    /** Waits until a sample asked after {@code sinceNanos} matches, or the timeout passes; returns when, or -1. */
    long awaitFirstSample(long sinceNanos, Predicate<Sample> matching, long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (System.nanoTime() < deadline) {
            for (Sample sample : samples) {
                if (sample.startNanos >= sinceNanos && matching.test(sample)) {
                    return sample.startNanos;
                }
            }
            pause(10_000);
        }
        return -1;
    }

    /** Returns the decisions asked between two moments (System.nanoTime). */
    List<Sample> between(long fromNanos, long toNanos) {
        return samples.stream()
                .filter(s -> s.startNanos >= fromNanos && s.startNanos < toNanos)
                .toList();
    }

    List<Sample> all() {
        return List.copyOf(samples);
    }

    List<Throwable> escaped() {
        return List.copyOf(escaped);
    }

    /** Returns the slowest decision in milliseconds. */
    double slowestMillis() {
        return samples.stream().mapToLong(Sample::tookNanos).max().orElse(0) / 1e6;
    }

    /** Returns the given percentile of decision times in milliseconds. */
    double percentileMillis(double percentile) {
        long[] took = samples.stream().mapToLong(Sample::tookNanos).sorted().toArray();
        if (took.length == 0) {
            return 0;
        }
        return took[(int) Math.min(took.length - 1, Math.ceil(percentile / 100 * took.length) - 1)] / 1e6;
    }

    @Override
    public void close() {
        stop.set(true);
        for (Thread thread : threads) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void pause(long micros) {
        try {
            TimeUnit.MICROSECONDS.sleep(micros);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
