package io.tollgate;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * A {@link RateLimiter} that keeps buckets in this JVM's memory: for a single instance, for tests, and as
 * the reference that the distributed backends agree with decision for decision.
 *
 * <p>Buckets live in a bounded Caffeine cache. An idle key costs nothing for long: its entry is dropped
 * once its bucket is full again, at the latest one refill time (capacity ÷ rate of the slowest limit) plus
 * one second after its last use, and never before it is full. When more than {@link
 * Builder#maximumKeys(long) maximumKeys} keys are in use, the least valuable entries are dropped early; a
 * dropped bucket comes back full, so a flood of random keys can exhaust neither the heap nor a client's
 * limit, but may let keys that were dropped early pass sooner.
 *
 * <p>Thread-safe without a global lock: a one-limit policy's bucket is one word updated by compare-and-set;
 * a policy with several limits locks only its own bucket. Under any contention the number of requests
 * admitted is exactly what the buckets allow.
 */
public final class InMemoryRateLimiter implements RateLimiter {

    /** The default bound on keys held at once. */
    public static final long DEFAULT_MAXIMUM_KEYS = 100_000;

    /** Extra life of an entry, so that a charge delayed between lookup and update is never lost. */
    private static final long GRACE_MICROS = 1_000_000;

    private final TimeSource timeSource;
    private final Cache<BucketKey, Bucket> buckets;

    private InMemoryRateLimiter(Builder builder) {
        this.timeSource = builder.timeSource;
        long origin = timeSource.nowMicros();
        // Caffeine reads time like System.nanoTime: only differences count, and they wrap harmlessly.
        Caffeine<Object, Object> caffeine = Caffeine.newBuilder()
                .maximumSize(builder.maximumKeys)
                .ticker(() -> (timeSource.nowMicros() - origin) * 1_000);
        if (builder.maintenanceExecutor != null) {
            caffeine.executor(builder.maintenanceExecutor);
        }
        this.buckets = caffeine.expireAfter(new UntilFull(origin))
                .<BucketKey, Bucket>evictionListener((key, bucket, cause) -> {
                    if (bucket != null) {
                        bucket.retire(timeSource.nowMicros());
                    }
                })
                .build();
    }

    /** Returns a limiter with the defaults: {@value #DEFAULT_MAXIMUM_KEYS} keys, the system time source. */
    public static InMemoryRateLimiter create() {
        return builder().build();
    }

    /** Returns a builder for a limiter with non-default settings. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        BucketKey bucketKey = bucketKey(key, policy, cost);
        for (; ; ) {
            long now = timeSource.nowMicros();
            Bucket bucket = bucket(bucketKey, policy, now);
            Decision decision = bucket.tryAcquire(now, cost);
            if (decision != null) {
                return decision;
            }
            replaceIfStale(bucketKey, bucket, policy, now);
        }
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        return CompletableFuture.completedFuture(tryAcquire(key, policy, cost));
    }

    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        BucketKey bucketKey = bucketKey(key, policy, cost);
        long maxWaitMicros = waitMicros(maxWait);
        for (; ; ) {
            long now = timeSource.nowMicros();
            Bucket bucket = bucket(bucketKey, policy, now);
            long wait = bucket.reserve(now, cost, maxWaitMicros);
            if (wait == Bucket.DENIED) {
                return false;
            }
            if (wait != Bucket.RETRY) {
                timeSource.sleepMicros(wait);
                return true;
            }
            replaceIfStale(bucketKey, bucket, policy, now);
        }
    }

    /** Returns roughly how many keys hold buckets now; for monitoring. */
    public long estimatedKeyCount() {
        return buckets.estimatedSize();
    }

    /** Performs pending cache maintenance now, such as dropping expired entries; for tests. */
    void cleanUp() {
        buckets.cleanUp();
    }

    private static BucketKey bucketKey(String key, Policy policy, long cost) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(policy, "policy");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
        policy.checkCost(cost);
        return new BucketKey(policy.name(), key);
    }

    private Bucket bucket(BucketKey bucketKey, Policy policy, long now) {
        Bucket bucket = buckets.getIfPresent(bucketKey);
        if (bucket == null) {
            bucket = buckets.get(bucketKey, k -> Bucket.full(policy, now));
        }
        if (!bucket.serves(policy)) {
            bucket = buckets.asMap()
                    .compute(
                            bucketKey,
                            (k, current) -> current == null
                                    ? Bucket.full(policy, now)
                                    : current.serves(policy) ? current : current.successor(policy, now));
        }
        return bucket;
    }

    /** Replaces a bucket that asked to be rebased; a retired one is already gone or being replaced. */
    private void replaceIfStale(BucketKey bucketKey, Bucket stale, Policy policy, long now) {
        if (stale.needsRebase(now)) {
            buckets.asMap()
                    .computeIfPresent(
                            bucketKey, (k, current) -> current == stale ? stale.successor(policy, now) : current);
        } else {
            Thread.onSpinWait();
        }
    }

    private static long waitMicros(Duration maxWait) {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, was " + maxWait);
        }
        long seconds = maxWait.getSeconds();
        return seconds >= Long.MAX_VALUE / 1_000_000 - 1
                ? Long.MAX_VALUE
                : seconds * 1_000_000 + maxWait.getNano() / 1_000;
    }

    @Override
    public String toString() {
        return "InMemoryRateLimiter[keys=" + buckets.estimatedSize() + "]";
    }

    /** A bucket's cache key: the policy name and the client key. */
    private record BucketKey(String policy, String key) {}

    /**
     * Keeps an entry while its bucket may still be below full: after each lookup, the time until it is full
     * as of now, plus the longest a charge that follows the lookup can add (a full refill), plus a grace.
     */
    private static final class UntilFull implements Expiry<BucketKey, Bucket> {

        private final long origin;

        UntilFull(long origin) {
            this.origin = origin;
        }

        @Override
        public long expireAfterCreate(BucketKey key, Bucket bucket, long currentTime) {
            return lifeNanos(bucket, currentTime);
        }

        @Override
        public long expireAfterUpdate(BucketKey key, Bucket bucket, long currentTime, long currentDuration) {
            return lifeNanos(bucket, currentTime);
        }

        @Override
        public long expireAfterRead(BucketKey key, Bucket bucket, long currentTime, long currentDuration) {
            return lifeNanos(bucket, currentTime);
        }

        private long lifeNanos(Bucket bucket, long currentNanos) {
            long micros = bucket.untilFullMicros(origin + currentNanos / 1_000) + bucket.maxFillMicros + GRACE_MICROS;
            return micros >= Long.MAX_VALUE / 1_000 ? Long.MAX_VALUE : micros * 1_000;
        }
    }

    /** Settings for an {@link InMemoryRateLimiter}. Not thread-safe; build once and share the limiter. */
    public static final class Builder {

        private long maximumKeys = DEFAULT_MAXIMUM_KEYS;
        private TimeSource timeSource = TimeSource.system();
        private Executor maintenanceExecutor;

        private Builder() {}

        /**
         * Sets the most keys whose buckets are held at once (default {@value #DEFAULT_MAXIMUM_KEYS}).
         *
         * @throws IllegalArgumentException if maximumKeys is below 1
         */
        public Builder maximumKeys(long maximumKeys) {
            if (maximumKeys < 1) {
                throw new IllegalArgumentException("maximumKeys must be at least 1, was " + maximumKeys);
            }
            this.maximumKeys = maximumKeys;
            return this;
        }

        /** Sets where time comes from (default {@link TimeSource#system()}); tests pass a manual one. */
        public Builder timeSource(TimeSource timeSource) {
            this.timeSource = Objects.requireNonNull(timeSource, "timeSource");
            return this;
        }

        /** Runs cache maintenance on the given executor; tests use a direct one to see evictions at once. */
        Builder maintenanceExecutor(Executor executor) {
            this.maintenanceExecutor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** Returns a new limiter with these settings. */
        public InMemoryRateLimiter build() {
            return new InMemoryRateLimiter(this);
        }
    }
}
