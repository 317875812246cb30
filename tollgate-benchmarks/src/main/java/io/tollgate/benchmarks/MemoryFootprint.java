package io.tollgate.benchmarks;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Heap retained per client key: Tollgate's in-memory limiter beside Bucket4j local buckets in a
 * ConcurrentHashMap, one limit of capacity 10 refilled 1 per hour, each key asked once (so no bucket is full
 * again, and none may be dropped). The key strings are made before the baseline is read, so the figures
 * exclude them.
 *
 * <p>Run: {@code java -Xmx4g -cp tollgate-benchmarks/target/benchmarks.jar
 * io.tollgate.benchmarks.MemoryFootprint [keys]}
 */
public final class MemoryFootprint {

    private MemoryFootprint() {}

    public static void main(String[] args) {
        int keys = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        String[] names = new String[keys];
        for (int i = 0; i < keys; i++) {
            names[i] = "client-" + i;
        }
        Policy policy = Policy.of("footprint", Limit.of(10, Rate.perHour(1)));
        Bandwidth bandwidth = Bandwidth.builder()
                .capacity(10)
                .refillGreedy(5, java.time.Duration.ofSeconds(1))
                .build();

        long base = usedHeap();
        InMemoryRateLimiter tollgate =
                InMemoryRateLimiter.builder().maximumKeys(keys).build();
        for (String name : names) {
            tollgate.tryAcquire(name, policy);
        }
        long tollgateBytes = usedHeap() - base;
        report("tollgate InMemoryRateLimiter", keys, tollgateBytes, tollgate.estimatedKeyCount());
        tollgate = null;

        base = usedHeap();
        ConcurrentHashMap<String, Bucket> bucket4j = new ConcurrentHashMap<>();
        for (String name : names) {
            bucket4j.computeIfAbsent(
                            name, k -> Bucket.builder().addLimit(bandwidth).build())
                    .tryConsume(1);
        }
        long bucket4jBytes = usedHeap() - base;
        report("bucket4j LockFreeBucket in ConcurrentHashMap", keys, bucket4jBytes, bucket4j.size());
    }

    private static void report(String what, int keys, long bytes, long held) {
        System.out.printf(
                "%-46s %,d keys (%,d held): %,d bytes, %.0f bytes per key%n",
                what, keys, held, bytes, (double) bytes / keys);
    }

    private static long usedHeap() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 5; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
