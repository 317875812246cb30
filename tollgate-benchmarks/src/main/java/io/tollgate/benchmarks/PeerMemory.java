package io.tollgate.benchmarks;

import io.github.bucket4j.BucketConfiguration;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.function.IntFunction;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redis memory per client key for Tollgate, Bucket4j's Lettuce proxy manager and Redisson's {@code
 * RRateLimiter}, after 1, 100 and 10 000 granted requests per key (a limit of 100 000 a day; the buckets refilled a token a minute
 * for the token buckets, so that every request is granted and no key expires during a run): {@code used_memory} before and after, divided by the
 * keys. Tollgate and Bucket4j keep a bucket's state, whatever the requests; Redisson keeps every grant of the
 * rate's interval.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.PeerMemory}. It
 * starts its own redis-server.
 */
public final class PeerMemory {

    private static final long LIMIT = 100_000;

    private PeerMemory() {}

    public static void main(String[] args) throws Exception {
        System.out.println("| limiter | keys | grants per key | Redis memory per key |");
        System.out.println("| --- | --- | --- | --- |");
        try (RedisServer redis = RedisServer.start()) {
            for (int[] point : new int[][] {{100_000, 1}, {10_000, 100}, {100, 10_000}}) {
                int keys = point[0];
                int grants = point[1];
                tollgate(redis, keys, grants);
                bucket4j(redis, keys, grants);
                redisson(redis, keys, grants);
            }
        }
    }

    private static void tollgate(RedisServer redis, int keys, int grants) throws Exception {
        Policy policy = Policy.of("memory", Limit.of(LIMIT, Rate.perMinute(1)));
        try (RedisRateLimiter limiter = RedisRateLimiter.builder()
                .uri(redis.uri())
                .timeout(Duration.ofSeconds(1))
                .expectedInstances(1) // no announcement key in the count
                .build()) {
            measure(
                    redis,
                    "Tollgate",
                    keys,
                    grants,
                    key -> limiter.tryAcquireAsync("client-" + key, policy, 1)
                            .thenApply(decision -> decision.allowed()));
        }
    }

    private static void bucket4j(RedisServer redis, int keys, int grants) throws Exception {
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
            AsyncProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(connection)
                    .expirationAfterWrite(
                            ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                    .build()
                    .asAsync();
            BucketConfiguration configuration = BucketConfiguration.builder()
                    .addLimit(limit -> limit.capacity(LIMIT).refillGreedy(1, Duration.ofMinutes(1)))
                    .build();
            measure(
                    redis,
                    "Bucket4j",
                    keys,
                    grants,
                    key -> buckets.builder()
                            .build(("client-" + key).getBytes(StandardCharsets.UTF_8), configuration)
                            .tryConsume(1));
        } finally {
            client.shutdown();
        }
    }

    private static void redisson(RedisServer redis, int keys, int grants) throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri());
        RedissonClient client = Redisson.create(config);
        try {
            List<RRateLimiter> limiters = new ArrayList<>();
            for (int key = 0; key < keys; key++) {
                limiters.add(client.getRateLimiter("client-" + key));
            }
            measure(redis, "Redisson", keys, grants, key -> {
                RRateLimiter limiter = limiters.get(key);
                return limiter.trySetRateAsync(RateType.OVERALL, LIMIT, Duration.ofDays(1))
                        .thenCompose(set -> limiter.tryAcquireAsync());
            });
        } finally {
            client.shutdown();
        }
    }

    /** Sends {@code grants} requests for each of {@code keys} keys, 256 at a time, and prints the memory row. */
    private static void measure(
            RedisServer redis, String limiter, int keys, int grants, IntFunction<CompletionStage<?>> request)
            throws Exception {
        redis.command("FLUSHALL");
        long before = Long.parseLong(redis.info("used_memory"));
        Semaphore inFlight = new Semaphore(256);
        List<Throwable> failures = new ArrayList<>();
        for (int grant = 0; grant < grants; grant++) {
            for (int key = 0; key < keys; key++) {
                inFlight.acquire();
                CompletionStage<?> sent;
                try {
                    sent = request.apply(key);
                } catch (RuntimeException e) {
                    sent = CompletableFuture.failedFuture(e);
                }
                sent.whenComplete((answer, failure) -> {
                    if (failure != null || Boolean.FALSE.equals(answer)) {
                        synchronized (failures) {
                            failures.add(failure != null ? failure : new IllegalStateException("refused"));
                        }
                    }
                    inFlight.release();
                });
            }
        }
        inFlight.acquire(256);
        long after = Long.parseLong(redis.info("used_memory"));
        System.out.printf(
                "| %s | %,d | %,d | %,d bytes |%s%n",
                limiter,
                keys,
                grants,
                (after - before) / keys,
                failures.isEmpty() ? "" : " (" + failures.size() + " failed or refused: " + failures.get(0) + ")");
    }
}
