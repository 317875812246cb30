package io.tollgate;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link RateLimiter} that keeps buckets in this JVM's memory: for a single instance, for tests, and as
 * the reference that the distributed backends agree with decision for decision.
 *
 * <p>Buckets live in a bounded Caffeine cache. An idle key costs nothing for long: once its bucket is full
 * again its entry is dropped by a sweep that runs, a slice at a time, on the threads that use the limiter
 * (a pass over 100 000 keys takes about a quarter of a second, then pauses a second). A bucket is never
 * dropped before it is full. When more than {@link Builder#maximumKeys(long) maximumKeys} keys are in use,
 * the cache drops the entries least likely to be used again; a dropped bucket comes back full, so a flood
 * of random keys can exhaust neither the heap nor a client's limit, but may let keys that were dropped
 * early pass sooner.
 *
 * <p>Thread-safe without a global lock: a one-limit policy's bucket is one word updated by compare-and-set;
 * a policy with several limits locks only its own bucket. Under any contention the number of requests
 * admitted is exactly what the buckets allow.
 */
public final class InMemoryRateLimiter implements RateLimiter {

    /** The default bound on keys held at once. */
    public static final long DEFAULT_MAXIMUM_KEYS = 100_000;

    private static final System.Logger LOG = System.getLogger(InMemoryRateLimiter.class.getName());

    /**
     * One lookup in this many is shown to the cache's eviction policy. Recording every read makes all
     * threads write to shared buffers, which halves throughput on a hot key; a sample keeps the relative
     * frequencies that decide which keys to drop when the cache is full.
     */
    private static final int ACCESS_SAMPLE = 32;

    private final TimeSource timeSource;
    private final InFlightSlots slots = new InFlightSlots();
    private final DecisionListeners listeners = new DecisionListeners();
    private final Cache<BucketKey, Bucket> buckets;
    private final com.github.benmanes.caffeine.cache.Policy<BucketKey, Bucket> cachePolicy;
    private final IdleBucketSweeper<BucketKey> sweeper;

    /**
     * The latest time at which a bucket was removed. A thread that read the time earlier and then finds the
     * key gone must not create a bucket that was full before its predecessor was: that would let it charge
     * a full bucket at a time when the real one was not full.
     */
    private final AtomicLong removedAt = new AtomicLong(Long.MIN_VALUE);

    private InMemoryRateLimiter(Builder builder) {
        this.timeSource = builder.timeSource;
        // Maintenance runs on the calling threads: handing it to a pool costs each caller a thread wake-up.
        this.buckets = Caffeine.newBuilder()
                .maximumSize(builder.maximumKeys)
                .executor(Runnable::run)
                .<BucketKey, Bucket>evictionListener((key, bucket, cause) -> {
                    if (bucket != null) {
                        long now = timeSource.nowMicros();
                        removedAt.accumulateAndGet(now, Math::max);
                        bucket.retire(now);
                    }
                })
                .build();
        this.cachePolicy = buckets.policy();
        this.sweeper = new IdleBucketSweeper<>(
                buckets.asMap(), now -> removedAt.accumulateAndGet(now, Math::max), timeSource.nowMicros());
        LOG.log(
                System.Logger.Level.INFO,
                "Tollgate keeps its buckets in this process''s memory, at most {0} keys: limits are not shared with"
                        + " other instances",
                builder.maximumKeys);
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
                sweeper.sweepIfDue(now);
                listeners.decided(key, policy, cost, decision.allowed(), DecisionEvent.MEMORY);
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
        long maxWaitMicros = LimiterArguments.acquireWaitMicros(maxWait);
        for (; ; ) {
            long now = timeSource.nowMicros();
            Bucket bucket = bucket(bucketKey, policy, now);
            long wait = bucket.reserve(now, cost, maxWaitMicros, 0);
            if (wait == Bucket.DENIED) {
                listeners.decided(key, policy, cost, false, DecisionEvent.MEMORY);
                return false;
            }
            if (wait != Bucket.RETRY) {
                sweeper.sweepIfDue(now);
                listeners.decided(key, policy, cost, true, DecisionEvent.MEMORY);
                timeSource.sleepMicros(wait);
                return true;
            }
            replaceIfStale(bucketKey, bucket, policy, now);
        }
    }

    /**
     * Gives {@code cost} tokens back to the key's buckets, each limit up to its capacity; the stage is
     * complete on return.
     *
     * @throws IllegalArgumentException if the key is empty, or the cost is below 1 or beyond what a charge may
     *     be
     * @throws NullPointerException if the key or policy is null
     */
    @Override
    public CompletionStage<Void> refundAsync(String key, Policy policy, long cost) {
        BucketKey bucketKey = chargeKey(key, policy, cost); // what a charge took may be given back at once
        for (; ; ) {
            long now = timeSource.nowMicros();
            Bucket bucket = bucket(bucketKey, policy, now);
            // Any wait: a bucket in debt (tokens taken ahead, or charged after the fact) must take it too
            if (bucket.reserve(now, -cost, TokenBucket.MAX_TICKS, 0) != Bucket.RETRY) {
                return CompletableFuture.completedFuture(null);
            }
            replaceIfStale(bucketKey, bucket, policy, now);
        }
    }

    /**
     * Takes {@code cost} from the key's buckets whatever they hold, into debt if they hold less but no deeper
     * than the policy's {@linkplain Policy#maxDebt() maximum debt}; the stage is complete on return, with what
     * they hold after it.
     *
     * @throws IllegalArgumentException if the key is empty or the cost is out of range
     * @throws NullPointerException if the key or policy is null
     */
    @Override
    public CompletionStage<BucketState> chargeAsync(String key, Policy policy, long cost) {
        BucketKey bucketKey = chargeKey(key, policy, cost);
        for (; ; ) {
            long now = timeSource.nowMicros();
            Bucket bucket = bucket(bucketKey, policy, now);
            // A charge must land: it is taken as far as the policy's maximum debt allows, never refused
            if (bucket.reserve(now, cost, TokenBucket.MAX_TICKS, policy.maxDebtMicros()) != Bucket.RETRY) {
                listeners.charged(key, policy, cost, DecisionEvent.MEMORY);
                long[] debts = bucket.debts(now);
                if (debts != null) {
                    sweeper.sweepIfDue(now);
                    return CompletableFuture.completedFuture(BucketState.of(policy.limits(), debts));
                }
                // retired by a concurrent policy change after the charge, which its successor carries
                return CompletableFuture.completedFuture(inspect(key, policy));
            }
            replaceIfStale(bucketKey, bucket, policy, now);
        }
    }

    /**
     * Tells {@code listener} of every decision and charge from now on, on the caller's thread, with the source
     * {@value DecisionEvent#MEMORY}.
     *
     * @throws NullPointerException if listener is null
     */
    @Override
    public DecisionListener.Subscription onDecision(DecisionListener listener) {
        return listeners.add(listener);
    }

    /**
     * Takes a slot of {@code limit} for {@code key} if fewer than its maximum are open in this limiter; the
     * stage is complete at once. Keys longer than {@value LimiterArguments#MAX_KEY_LENGTH} characters are kept as
     * their digest, as for buckets. Slots are counted only while a permit of the key is open.
     *
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public CompletionStage<Permit> tryAcquirePermitAsync(String key, ConcurrencyLimit limit) {
        return CompletableFuture.completedFuture(tryAcquirePermit(key, limit));
    }

    /**
     * Takes a slot as {@link #tryAcquirePermitAsync} does.
     *
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public Permit tryAcquirePermit(String key, ConcurrencyLimit limit) {
        LimiterArguments.checkPermit(key, limit);
        return slots.tryAcquire(LimiterArguments.boundedKey(key), limit, limit.maxInFlight(), null);
    }

    /**
     * Returns how many permits of the key are open in this limiter.
     *
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public int inFlight(String key, ConcurrencyLimit limit) {
        LimiterArguments.checkPermit(key, limit);
        return slots.inFlight(LimiterArguments.boundedKey(key), limit);
    }

    /**
     * Returns what the key's buckets hold now, without changing them.
     *
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public BucketState inspect(String key, Policy policy) {
        BucketKey bucketKey = bucketKey(key, policy, 1);
        long now = timeSource.nowMicros();
        Bucket bucket = cachePolicy.getIfPresentQuietly(bucketKey);
        long[] debts = bucket == null || bucket.isForgotten(now) ? null : bucket.debts(now);
        if (debts == null) {
            return BucketState.of(policy.limits(), TokenBucket.initialDebts(policy.limits()));
        }
        if (!bucket.serves(policy)) {
            long[] converted = new long[policy.limits().size()]; // as Bucket.successor converts

            for (int i = 0; i < converted.length && i < bucket.policy.limits().size(); i++) {
                converted[i] = TokenBucket.convert(
                        debts[i], bucket.policy.limits().get(i), policy.limits().get(i));
            }
            debts = converted;
        }
        return BucketState.of(policy.limits(), debts);
    }

    /**
     * Says whether this limiter keeps buckets of the key: not for a key it never saw, nor once they were reset,
     * swept away full, or forgotten.
     *
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public boolean holds(String key, Policy policy) {
        Bucket bucket = cachePolicy.getIfPresentQuietly(bucketKey(key, policy, 1));
        return bucket != null && !bucket.isForgotten(timeSource.nowMicros());
    }

    /**
     * Forgets the key's buckets: its next request finds new ones.
     *
     * @return {@link Propagation#none()}: no other instance shares these buckets
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public Propagation reset(String key, Policy policy) {
        BucketKey bucketKey = bucketKey(key, policy, 1);
        long now = timeSource.nowMicros();
        buckets.asMap().computeIfPresent(bucketKey, (k, bucket) -> {
            bucket.retire(now); // a thread that holds it looks the key up again
            return null;
        });
        return Propagation.none();
    }

    /** Returns roughly how many keys hold buckets now; for monitoring. */
    public long estimatedKeyCount() {
        return buckets.estimatedSize();
    }

    /** Returns how many characters the kept keys hold together; for tests of the key length rule. */
    long keyCharacters() {
        return buckets.asMap().keySet().stream()
                .mapToLong(k -> k.key().length())
                .sum();
    }

    /** Drops every idle key and performs pending cache maintenance now; for tests. */
    void cleanUp() {
        sweeper.sweepAll(timeSource.nowMicros());
        buckets.cleanUp();
    }

    private static BucketKey bucketKey(String key, Policy policy, long cost) {
        LimiterArguments.checkRequest(key, policy, cost);
        return new BucketKey(policy.name(), LimiterArguments.boundedKey(key));
    }

    /** As {@link #bucketKey}, for a charge or refund, whose cost may exceed the capacity. */
    private static BucketKey chargeKey(String key, Policy policy, long cost) {
        LimiterArguments.checkCharge(key, policy, cost);
        return new BucketKey(policy.name(), LimiterArguments.boundedKey(key));
    }

    private Bucket bucket(BucketKey bucketKey, Policy policy, long now) {
        Bucket bucket = cachePolicy.getIfPresentQuietly(bucketKey);
        if (bucket != null && ThreadLocalRandom.current().nextInt(ACCESS_SAMPLE) == 0) {
            buckets.getIfPresent(bucketKey);
        }
        if (bucket == null) {
            bucket = buckets.get(bucketKey, k -> Bucket.fresh(policy, Math.max(now, removedAt.get())));
        }
        if (!bucket.serves(policy)) {
            bucket = buckets.asMap()
                    .compute(
                            bucketKey,
                            (k, current) -> current == null
                                    ? Bucket.fresh(policy, Math.max(now, removedAt.get()))
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

    @Override
    public String toString() {
        return "InMemoryRateLimiter[keys=" + buckets.estimatedSize() + "]";
    }

    /** A bucket's cache key: the policy name and the client key. */
    private record BucketKey(String policy, String key) {}

    /** Settings for an {@link InMemoryRateLimiter}. Not thread-safe; build once and share the limiter. */
    public static final class Builder {

        private long maximumKeys = DEFAULT_MAXIMUM_KEYS;
        private TimeSource timeSource = TimeSource.system();

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

        /** Returns a new limiter with these settings. */
        public InMemoryRateLimiter build() {
            return new InMemoryRateLimiter(this);
        }
    }
}
