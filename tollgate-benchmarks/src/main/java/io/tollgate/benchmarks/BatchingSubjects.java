package io.tollgate.benchmarks;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.tollgate.Policy;
import io.tollgate.TimeSource;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisServer;
import io.tollgate.top.HeavyHitters;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The limiters {@link BatchingLoadHarness} measures, each on a fresh Redis: Tollgate (batching or not),
 * Bucket4j's Lettuce proxy manager (with its batching optimization or not), and Redisson's {@code RRateLimiter}.
 */
final class BatchingSubjects {

    private static final long CAPACITY = RedisLoadHarness.CAPACITY;
    private static final Policy POLICY = RedisLoadHarness.POLICY;
    private static final BucketConfiguration BUCKET4J = RedisLoadHarness.BUCKET4J;

    private BatchingSubjects() {}

    /** One limiter under test: opens with a fresh Redis, decides by key. */
    interface Subject extends AutoCloseable {
        CompletionStage<?> decide(String key);

        @Override
        void close();
    }

    /** No limiter: every request answered at once, so that the harness's own ceiling is measured. */
    static Subject none() {
        CompletableFuture<Void> answered = CompletableFuture.completedFuture(null);
        return new Subject() {
            @Override
            public CompletionStage<?> decide(String key) {
                return answered;
            }

            @Override
            public void close() {}
        };
    }

    static Subject tollgate(RedisServer redis, boolean batching) {
        return tollgate(RedisRateLimiter.builder().uri(redis.uri()), batching);
    }

    static Subject tollgate(RedisRateLimiter.Builder target, boolean batching) {
        return tollgate(target, batching, false);
    }

    /** Tollgate on Redis, its decisions counted by policy and key (as the server counts them) if {@code counted}. */
    static Subject tollgate(RedisRateLimiter.Builder target, boolean batching, boolean counted) {
        // A budget of a second: this measures decisions made by Redis, not the fallback.
        RedisRateLimiter limiter =
                target.timeout(Duration.ofSeconds(1)).batching(batching).build();
        if (counted) {
            limiter.onDecision(new HeavyHitters(TimeSource.system(), HeavyHitters.DEFAULT_CAPACITY));
        }
        return new Subject() {
            @Override
            public CompletionStage<?> decide(String key) {
                return limiter.tryAcquireAsync(key, POLICY, 1);
            }

            @Override
            public void close() {
                limiter.close();
            }
        };
    }

    static Subject bucket4j(RedisServer redis, boolean batching) {
        RedisClient client = RedisClient.create(redis.uri());
        StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
        AsyncProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(connection)
                .expirationAfterWrite(
                        ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                .build()
                .asAsync();
        Map<String, AsyncBucketProxy> proxies = new ConcurrentHashMap<>();
        return new Subject() {
            @Override
            public CompletionStage<?> decide(String key) {
                return proxies.computeIfAbsent(key, k -> {
                            var builder = buckets.builder();
                            if (batching) {
                                builder = builder.withOptimization(Optimizations.batching());
                            }
                            return builder.build(k.getBytes(StandardCharsets.UTF_8), BUCKET4J);
                        })
                        .tryConsumeAndReturnRemaining(1);
            }

            @Override
            public void close() {
                connection.close();
                client.shutdown();
            }
        };
    }

    /**
     * Redisson's {@code RRateLimiter}, one per key, its rate set once per key before its first request (its
     * own call, as Redisson requires), at CAPACITY permits a second so that every request passes as for the
     * others. Redisson keeps each grant in a sorted set for the rate's interval: the memory it needs per key
     * grows with the grants of the last second.
     */
    static Subject redisson(RedisServer redis) {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri());
        RedissonClient client = Redisson.create(config);
        Map<String, CompletionStage<RRateLimiter>> limiters = new ConcurrentHashMap<>();
        return new Subject() {
            @Override
            public CompletionStage<?> decide(String key) {
                return limiters.computeIfAbsent(key, k -> {
                            RRateLimiter limiter = client.getRateLimiter(k);
                            return limiter.trySetRateAsync(RateType.OVERALL, CAPACITY, Duration.ofSeconds(1))
                                    .thenApply(set -> limiter);
                        })
                        .thenCompose(RRateLimiter::tryAcquireAsync);
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }
}
