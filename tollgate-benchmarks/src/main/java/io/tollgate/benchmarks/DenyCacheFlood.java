package io.tollgate.benchmarks;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * What a flood of refused requests costs Redis: 64 requests in flight, for 10 s, on keys whose buckets are empty
 * (one token an hour, taken before the flood), from one key or from 10 000 at random. Prints the Redis commands
 * per refused request for Tollgate at several deny-cache ceilings ({@code denyCacheMaxAge}), and for Bucket4j's
 * Lettuce proxy manager (no deny cache: every request asks Redis), measured in the same run on one redis-server
 * the harness starts. Commands are counted by Redis ({@code INFO stats}, total_commands_processed), so the
 * limiter's own background calls (announcing its instance once a second) are counted too.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.DenyCacheFlood}.
 */
public final class DenyCacheFlood {

    private static final Policy HOURLY = Policy.of("flood", Limit.of(1, Rate.perHour(1)));
    private static final BucketConfiguration BUCKET4J = BucketConfiguration.builder()
            .addLimit(limit -> limit.capacity(1).refillGreedy(1, Duration.ofHours(1)))
            .build();
    private static final int IN_FLIGHT = 64;
    private static final Duration RUN = Duration.ofSeconds(10);

    private DenyCacheFlood() {}

    public static void main(String[] args) throws Exception {
        System.out.println("| subject | keys | refused requests/s | Redis commands | commands per refused request |");
        System.out.println("| --- | --- | --- | --- | --- |");
        try (RedisServer redis = RedisServer.start()) {
            for (int keys : new int[] {1, 10_000}) {
                for (Duration ceiling : List.of(
                        Duration.ofHours(1), Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofSeconds(1))) {
                    redis.command("FLUSHALL");
                    try (RedisRateLimiter limiter = RedisRateLimiter.builder()
                            .uri(redis.uri())
                            .denyCacheMaxAge(ceiling)
                            .build()) {
                        limiter.warmUp(Duration.ofSeconds(10));
                        run(
                                "Tollgate, ceiling " + describe(ceiling),
                                redis,
                                keys,
                                key -> limiter.tryAcquireAsync(key, HOURLY, 1)
                                        .toCompletableFuture()
                                        .thenApply(decision -> decision.allowed()));
                    }
                }
                redis.command("FLUSHALL");
                RedisClient client = RedisClient.create(redis.uri());
                try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
                    AsyncProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(connection)
                            .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                                    Duration.ofSeconds(10)))
                            .build()
                            .asAsync();
                    Map<String, AsyncBucketProxy> proxies = new ConcurrentHashMap<>();
                    run(
                            "Bucket4j Lettuce (CAS)",
                            redis,
                            keys,
                            key -> proxies.computeIfAbsent(
                                            key,
                                            k -> buckets.builder().build(k.getBytes(StandardCharsets.UTF_8), BUCKET4J))
                                    .tryConsume(1));
                } finally {
                    client.shutdown();
                }
            }
        }
    }

    private static void run(
            String subject, RedisServer redis, int keys, Function<String, CompletableFuture<Boolean>> decide)
            throws Exception {
        List<String> names = new ArrayList<>(keys);
        for (int i = 0; i < keys; i++) {
            names.add("client-" + i);
        }
        for (String name : names) { // empty every bucket, then let the flood warm up for two seconds
            decide.apply(name).get(10, TimeUnit.SECONDS);
        }
        flood(names, decide, TimeUnit.SECONDS.toNanos(2));
        long commandsBefore = commands(redis);
        long[] counted = flood(names, decide, RUN.toNanos());
        long commands = commands(redis) - commandsBefore - 1; // the INFO itself
        System.out.printf(
                "| %s | %,d | %,d | %,d | %.5f |%n",
                subject, keys, counted[0] * 1_000_000_000L / RUN.toNanos(), commands, (double) commands / counted[0]);
        if (counted[1] > 0) {
            System.out.println("  (" + counted[1] + " requests were admitted: the flood is meant to be refused)");
        }
    }

    /** Floods for {@code nanos}; returns the refused and admitted requests. */
    private static long[] flood(List<String> names, Function<String, CompletableFuture<Boolean>> decide, long nanos)
            throws InterruptedException {
        Semaphore slots = new Semaphore(IN_FLIGHT);
        SplittableRandom random = new SplittableRandom(11);
        AtomicLong refused = new AtomicLong();
        AtomicLong admitted = new AtomicLong();
        long stopAt = System.nanoTime() + nanos;
        while (System.nanoTime() < stopAt) {
            slots.acquire();
            decide.apply(names.get(random.nextInt(names.size()))).whenComplete((allowed, failure) -> {
                if (failure == null) {
                    (allowed ? admitted : refused).incrementAndGet();
                }
                slots.release();
            });
        }
        slots.acquire(IN_FLIGHT);
        return new long[] {refused.get(), admitted.get()};
    }

    private static long commands(RedisServer redis) {
        return Long.parseLong(redis.info("total_commands_processed"));
    }

    private static String describe(Duration ceiling) {
        return ceiling.toHours() > 0 ? ceiling.toHours() + " h (none within the run)" : ceiling.toSeconds() + " s";
    }
}
