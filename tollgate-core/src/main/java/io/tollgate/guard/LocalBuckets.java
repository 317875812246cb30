package io.tollgate.guard;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.TimeSource;
import io.tollgate.TokenBucket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

/**
 * The buckets this instance knows, on which the {@code LOCAL} failure policy decides: for each key that
 * the store decided lately, the debts the store last reported, as of when its answer arrived, plus what the fallback
 * charged since. A key that the store last reported empty is therefore refused here with the retry-after its
 * bucket implies, and one with tokens left admits only those. Only keys this instance never saw (or forgot)
 * start full.
 *
 * <p><b>Shares.</b> With {@code expectedInstances} n above 1, each instance decides on its share of a
 * policy: each limit's capacity divided by n (rounded up) and its rate divided by n. A bucket that the store
 * reported is brought into the share by its time: the share is full again when the real bucket would be,
 * so the instances together hold about what the real bucket held.
 *
 * <p><b>Time.</b> An answer is taken as of its arrival, after the store decided, so the bucket here refills no
 * sooner than the real one. Answers that arrive out of order (batches of one key on their way together, a
 * late answer after a newer one) are told apart by the the store's time they carry: an older one never replaces
 * a newer one.
 *
 * <p><b>Bounds.</b> At most {@code maximumKeys} keys, the least used dropped first; a key is also dropped
 * about a minute after its bucket is full again, when it is the same as a key never seen. Thread-safe: each
 * key's bucket is locked only by the requests for that key.
 */
final class LocalBuckets {

    /** How long a key stays known after its bucket is full again. */
    private static final long FORGET_AFTER_FULL_MICROS = 60_000_000;

    private static final int MAX_CACHED_POLICIES = 1_024;

    private record Key(String policy, String key) {}

    /** One key's bucket: the debts of the local policy's limits at {@code atMicros}. */
    private static final class Known {
        /** The limits of the policy this bucket is a share of. */
        private List<Limit> real;
        /** The share of them that this instance decides on. */
        private Policy policy;

        private long[] debts;
        private long atMicros;
        private long redisMicros;
        /** When the fallback last charged this bucket: the store's answers to requests sent before miss that. */
        private long chargedLocallyMicros = Long.MIN_VALUE;
        /** When the cache drops this key unless it is written again; moved on only when the bucket nears it. */
        private volatile long forgetAtMicros;

        Known(List<Limit> real, Policy policy, long[] debts, long atMicros, long redisMicros) {
            set(real, policy, debts, atMicros, redisMicros);
        }

        private void set(List<Limit> real, Policy policy, long[] debts, long atMicros, long redisMicros) {
            this.real = real;
            this.policy = policy;
            this.debts = debts;
            this.atMicros = atMicros;
            this.redisMicros = redisMicros;
        }

        /**
         * Returns when the cache is to forget this bucket, as it is written: a minute after it is full again;
         * the time is kept, so that a later charge can tell whether it must be moved on.
         */
        synchronized long scheduleForgetting() {
            forgetAtMicros = fullAtMicros() + FORGET_AFTER_FULL_MICROS;
            return forgetAtMicros;
        }

        /** Returns when this bucket is full again, in µs of the local clock. */
        long fullAtMicros() {
            long until = 0;
            for (int i = 0; i < debts.length; i++) {
                until = Math.max(
                        until,
                        TokenBucket.untilFullMicros(debts[i], policy.limits().get(i)));
            }
            return atMicros + until;
        }

        /**
         * Brings the debts to {@code nowMicros}: as the local policy's limits refill them. When the share
         * changed since (another count of instances), the bucket becomes the new share that is full again
         * when the old one would have been; when the policy itself changed, it starts again.
         */
        void refill(Policy realPolicy, Policy local, long nowMicros) {
            long elapsed = Math.max(0, nowMicros - atMicros);
            for (int i = 0; i < debts.length; i++) {
                debts[i] =
                        TokenBucket.debtAfter(debts[i], elapsed, policy.limits().get(i));
            }
            atMicros = Math.max(atMicros, nowMicros);
            if (local.limits().equals(policy.limits())) {
                return;
            }
            if (realPolicy.limits().equals(real)) {
                set(real, local, sameFullness(policy, local, debts), atMicros, redisMicros);
            } else {
                // The policy changed under this name since: start again, as for a key never seen.
                set(realPolicy.limits(), local, TokenBucket.initialDebts(local.limits()), nowMicros, redisMicros);
            }
        }
    }

    /** A policy's share among so many instances. */
    private record Share(int instances, Policy policy) {}

    private final TimeSource time;
    private final IntSupplier instances;
    private final Cache<Key, Known> known;
    private final Map<Policy, Share> shares = new ConcurrentHashMap<>();

    /** How many keys the guard keeps what it learnt of, and unseen charges for. */
    static final long DEFAULT_KEYS = 100_000;

    /**
     * @param instances how many instances share the store now: each decides on that share of a policy; asked
     *     on every decision, so it may change (the live instances counted through the store)
     */
    LocalBuckets(long maximumKeys, IntSupplier instances, TimeSource time) {
        this.time = time;
        this.instances = instances;
        this.known = Caffeine.newBuilder()
                .maximumSize(maximumKeys)
                .ticker(() -> time.nowMicros() * 1_000)
                .executor(Runnable::run)
                .expireAfter(new ForgetAt<Key, Known>(Known::scheduleForgetting))
                .build();
    }

    /**
     * Takes note of what the store reported for a key: its real bucket's {@code debts} (an array this class may
     * keep and change) after a request sent at
     * {@code sentMicros} that the store decided at {@code redisMicros}, as of {@code nowMicros}, when the answer
     * arrived. If the fallback charged the bucket here after that request was sent, the store cannot have seen
     * that charge yet: each limit keeps the larger debt of the two, so that nothing admitted is forgotten.
     */
    void learn(Policy policy, String key, long[] debts, long redisMicros, long sentMicros, long nowMicros) {
        if (debts.length > policy.limits().size()) {
            debts = Arrays.copyOf(debts, policy.limits().size()); // the quotas' counts: the fallback has none
        }
        Policy local = share(policy);
        long[] localDebts = local == policy ? debts : sameFullness(policy, local, debts);
        Key cacheKey = new Key(policy.name(), key);
        Known bucket = known.policy().getIfPresentQuietly(cacheKey);
        if (bucket == null) {
            bucket = known.asMap()
                    .putIfAbsent(cacheKey, new Known(policy.limits(), local, localDebts, nowMicros, redisMicros));
            if (bucket == null) {
                return;
            }
        }
        long fullAt;
        synchronized (bucket) {
            if (redisMicros < bucket.redisMicros) {
                return; // an older answer than the one already known
            }
            if (sentMicros < bucket.chargedLocallyMicros && bucket.real.equals(policy.limits())) {
                bucket.refill(policy, local, nowMicros);
                for (int i = 0; i < localDebts.length; i++) {
                    localDebts[i] = Math.max(localDebts[i], bucket.debts[i]);
                }
            }
            bucket.set(policy.limits(), local, localDebts, nowMicros, redisMicros);
            fullAt = bucket.fullAtMicros();
        }
        keepUntilFull(cacheKey, bucket, fullAt);
    }

    /**
     * Decides a request of {@code cost}, no larger than the {@link #share} policy's smallest capacity, on
     * this instance's bucket of the key, and charges it if it passes.
     */
    Decision tryAcquire(Policy policy, String key, long cost) {
        Policy local = share(policy);
        return TokenBucket.decide(local.limits(), take(policy, local, key, cost, 0), cost, 0);
    }

    /**
     * Returns the refusal that this instance's bucket of the key gives a request of {@code cost} now, without
     * charging anything; null if the bucket would admit it, or if this instance knows nothing of the key (never
     * told, forgotten, or told under other limits).
     */
    Decision knownRefusal(Policy policy, String key, long cost) {
        Policy local = share(policy);
        Known bucket = known.policy().getIfPresentQuietly(new Key(policy.name(), key));
        if (bucket == null) {
            return null;
        }
        long now = time.nowMicros();
        long[] debts;
        synchronized (bucket) {
            if (!bucket.real.equals(policy.limits())
                    || TokenBucket.retentionMicros(bucket.policy.limits()) > 0
                            && TokenBucket.forgotten(bucket.policy.limits(), bucket.debts, now - bucket.atMicros)) {
                return null;
            }
            bucket.refill(policy, local, now);
            debts = bucket.debts.clone();
        }
        Decision decision = TokenBucket.decide(local.limits(), debts, Math.min(cost, local.maxCost()), 0);
        return decision.allowed() ? null : decision;
    }

    /**
     * Takes {@code cost}, no larger than the {@link #share} policy's smallest capacity, ahead of time from
     * this instance's bucket of the key if it can be had within {@code maxWaitMicros}; returns the
     * microseconds to wait before using it, or -1 if it cannot.
     */
    long reserve(Policy policy, String key, long cost, long maxWaitMicros) {
        Policy local = share(policy);
        long[] before = take(policy, local, key, cost, maxWaitMicros);
        return TokenBucket.allFit(local.limits(), before, cost, maxWaitMicros)
                ? TokenBucket.waitMicros(local.limits(), before, cost)
                : -1;
    }

    /**
     * Charges {@code cost} to the key's bucket under the {@code local} policy if it fits within {@code
     * maxWaitMicros}, and returns the debts it had just before.
     */
    private long[] take(Policy policy, Policy local, String key, long cost, long maxWaitMicros) {
        long now = time.nowMicros();
        Key cacheKey = new Key(policy.name(), key);
        Known bucket = bucket(cacheKey, policy, local, now);
        long[] before;
        long fullAt;
        synchronized (bucket) {
            boolean forgotten = bucket.policy.limits().equals(local.limits())
                    && TokenBucket.retentionMicros(local.limits()) > 0
                    && TokenBucket.forgotten(local.limits(), bucket.debts, now - bucket.atMicros);
            bucket.refill(policy, local, now);
            before = forgotten ? TokenBucket.initialDebts(local.limits()) : bucket.debts;
            boolean fits = TokenBucket.allFit(local.limits(), before, cost, maxWaitMicros);
            // The bucket gets an array of its own, refilled in place later; before is left to the caller.
            bucket.debts = fits ? TokenBucket.charged(local.limits(), before, cost) : before.clone();
            if (fits) {
                bucket.chargedLocallyMicros = now;
            }
            fullAt = bucket.fullAtMicros();
        }
        keepUntilFull(cacheKey, bucket, fullAt);
        return before;
    }

    /** Forgets what this instance knows of the key, whose bucket was reset or given tokens back elsewhere. */
    void forget(String policyName, String key) {
        known.invalidate(new Key(policyName, key));
    }

    /**
     * Returns the microseconds until this instance's bucket of the key is full again, as far as it knows; 0
     * for a key it does not know. For tests.
     */
    long untilFullMicros(Policy policy, String key) {
        Known bucket = known.policy().getIfPresentQuietly(new Key(policy.name(), key));
        if (bucket == null) {
            return 0;
        }
        synchronized (bucket) {
            return Math.max(0, bucket.fullAtMicros() - time.nowMicros());
        }
    }

    /**
     * Returns the policy that this instance enforces for {@code policy} on its own: its share of its limits.
     * Calendar quotas are the store's alone: a fallback decides on the limits.
     */
    Policy share(Policy policy) {
        int expectedInstances = Math.max(1, instances.getAsInt());
        if (expectedInstances == 1 && !policy.hasQuotas()) {
            return policy;
        }
        Share cached = shares.get(policy);
        if (cached != null && cached.instances() == expectedInstances) {
            return cached.policy();
        }
        List<Limit> limits = new ArrayList<>();
        for (Limit limit : policy.limits()) {
            long capacity = Math.max(1, (limit.capacity() + expectedInstances - 1) / expectedInstances);
            long initial = (limit.initialTokens() + expectedInstances - 1) / expectedInstances;
            limits.add(Limit.of(
                            capacity,
                            Rate.of(
                                    limit.refill().tokens(),
                                    limit.refill().period().multipliedBy(expectedInstances)))
                    .withInitialTokens(Math.min(capacity, initial)));
        }
        Policy share = new Policy(policy.name(), limits);
        if (shares.size() >= MAX_CACHED_POLICIES) {
            shares.clear(); // policies made on the fly: keep the cache bounded
        }
        shares.put(policy, new Share(expectedInstances, share));
        return share;
    }

    private Known bucket(Key cacheKey, Policy policy, Policy local, long now) {
        Known bucket = known.policy().getIfPresentQuietly(cacheKey);
        if (bucket == null) {
            bucket = known.get(
                    cacheKey,
                    k -> new Known(
                            policy.limits(), local, TokenBucket.initialDebts(local.limits()), now, Long.MIN_VALUE));
        }
        return bucket;
    }

    /**
     * Moves the key's expiry on when its bucket, full again at {@code fullAt}, will be full later than the
     * cache would forget it: rarely, since the expiry is set a minute past the bucket's full time.
     */
    private void keepUntilFull(Key cacheKey, Known bucket, long fullAt) {
        if (fullAt > bucket.forgetAtMicros - FORGET_AFTER_FULL_MICROS / 2) {
            known.asMap().replace(cacheKey, bucket, bucket); // asks ForgetAt again
        }
    }

    /**
     * The debts under {@code to}'s limits that are full again when those of {@code debts} under {@code from}
     * would be.
     */
    private static long[] sameFullness(Policy from, Policy to, long[] debts) {
        long[] shared = new long[debts.length];
        for (int i = 0; i < debts.length; i++) {
            long untilFull = TokenBucket.untilFullMicros(debts[i], from.limits().get(i));
            long ticksPerMicro = to.limits().get(i).refill().ticksPerMicrosecond();
            shared[i] = Math.min(untilFull, TokenBucket.MAX_TICKS / ticksPerMicro) * ticksPerMicro;
        }
        return shared;
    }
}
