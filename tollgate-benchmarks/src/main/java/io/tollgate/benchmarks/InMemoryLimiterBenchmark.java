package io.tollgate.benchmarks;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.Decision;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.redis.MicrometerMetrics;
import io.tollgate.top.HeavyHitters;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code tryAcquire} on the in-memory limiter beside Bucket4j's lock-free local bucket, each asked for the
 * same answer: allowed or not, tokens left, and how long to wait. Bucket4j keeps one bucket per key in a
 * ConcurrentHashMap (the usual way to key its local buckets); Tollgate in its own bounded, expiring cache.
 *
 * <p>{@code allowing}: capacity 10<sup>12</sup> refilled 1000/s, so every request passes (each call
 * writes) and no bucket is full again during a run. {@code refusing}: capacity 10 refilled 1 per minute, so
 * after the first requests every call is refused (the flood case).
 * Run with {@code -t 1} and {@code -t 2}; see docs/benchmarks.md. On a 2-core machine the JIT takes
 * about eight seconds to settle, hence the long warm-up.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class InMemoryLimiterBenchmark {

    @Param({"1", "100000"})
    int keys;

    @Param({"allowing", "refusing"})
    String scenario;

    String[] keyNames;
    Policy policy;
    InMemoryRateLimiter tollgate;
    RateLimiter tollgateMetered;
    RateLimiter tollgateCounted;
    ConcurrentHashMap<String, Bucket> bucket4j;

    @Setup(Level.Trial)
    public void setUp() {
        boolean allowing = scenario.equals("allowing");
        long capacity = allowing ? 1_000_000_000_000L : 10;
        Rate rate = allowing ? Rate.perSecond(1_000) : Rate.perMinute(1);
        policy = Policy.of("bench", Limit.of(capacity, rate));
        Bandwidth bandwidth = Bandwidth.builder()
                .capacity(capacity)
                .refillGreedy(rate.tokens(), rate.period())
                .build();
        tollgate = InMemoryRateLimiter.builder().maximumKeys(keys * 2L).build();
        tollgateMetered = InMemoryRateLimiter.builder().maximumKeys(keys * 2L).build();
        tollgateMetered.onDecision(
                MicrometerMetrics.of(new SimpleMeterRegistry()).decisions());
        tollgateCounted = InMemoryRateLimiter.builder().maximumKeys(keys * 2L).build();
        tollgateCounted.onDecision(
                MicrometerMetrics.of(new SimpleMeterRegistry()).decisions());
        tollgateCounted.onDecision(new HeavyHitters(TimeSource.system(), HeavyHitters.DEFAULT_CAPACITY));
        bucket4j = new ConcurrentHashMap<>();
        keyNames = new String[keys];
        for (int i = 0; i < keys; i++) {
            keyNames[i] = "client-" + i;
            tollgate.tryAcquire(keyNames[i], policy);
            tollgateMetered.tryAcquire(keyNames[i], policy);
            tollgateCounted.tryAcquire(keyNames[i], policy);
            bucket4j.put(keyNames[i], Bucket.builder().addLimit(bandwidth).build());
        }
    }

    /** Each thread walks its own random sequence of keys. */
    @State(Scope.Thread)
    public static class KeySequence {
        private static final int LENGTH = 1 << 20;
        private final int[] indexes = new int[LENGTH];
        private int next;

        @Setup(Level.Trial)
        public void setUp(InMemoryLimiterBenchmark benchmark) {
            SplittableRandom random =
                    new SplittableRandom(Thread.currentThread().getId());
            for (int i = 0; i < LENGTH; i++) {
                indexes[i] = random.nextInt(benchmark.keys);
            }
        }

        String key(String[] names) {
            return names[indexes[next++ & (LENGTH - 1)]];
        }
    }

    @Benchmark
    public Decision tollgate(KeySequence sequence) {
        return tollgate.tryAcquire(sequence.key(keyNames), policy);
    }

    /** As the server and the Spring Boot starter run it: under its guard, counting to Micrometer. */
    @Benchmark
    public Decision tollgateMetered(KeySequence sequence) {
        return tollgateMetered.tryAcquire(sequence.key(keyNames), policy);
    }

    /** As the server runs it: metered, and each decision counted by policy and key for {@code /admin/top}. */
    @Benchmark
    public Decision tollgateCounted(KeySequence sequence) {
        return tollgateCounted.tryAcquire(sequence.key(keyNames), policy);
    }

    @Benchmark
    public ConsumptionProbe bucket4j(KeySequence sequence) {
        return bucket4j.get(sequence.key(keyNames)).tryConsumeAndReturnRemaining(1);
    }

    /** Bucket4j's cheapest call, answering only yes or no: a lower bound on its cost. */
    @Benchmark
    public boolean bucket4jYesNo(KeySequence sequence) {
        return bucket4j.get(sequence.key(keyNames)).tryConsume(1);
    }
}
