package io.tollgate;

import java.util.List;

/**
 * The buckets of one (policy, key) pair in the in-memory limiter.
 *
 * <p>State is kept as each limit's full-again time in ticks since a base time, so a one-limit
 * bucket is a single word that can be updated with one compare-and-set. Tick counts grow with the age of
 * the base, so once a bucket has lived too long for them to fit in a long it asks to be rebased: replaced
 * by a successor with the same debts counted from a new base.
 *
 * <p>A bucket that has been replaced, or evicted from the limiter's cache, is <em>retired</em>: it refuses
 * every further update, so a thread that still holds it looks the key up again instead of charging a
 * bucket that no longer counts.
 */
abstract sealed class Bucket permits SingleLimitBucket, LockedBucket {

    /** Returned by {@link #reserve} when the request does not fit within the caller's wait. */
    static final long DENIED = -1;

    /** Returned by {@link #reserve} when the bucket is retired or needs rebasing: look the key up again. */
    static final long RETRY = -2;

    /** Tick counts since the base stay below this, far from overflowing a long. */
    static final long MAX_TICKS_SINCE_BASE = 1L << 62;

    final Policy policy;

    Bucket(Policy policy) {
        this.policy = policy;
    }

    /** Returns a new bucket for {@code policy}: full, or with its limits' initial tokens, from {@code nowMicros}. */
    static Bucket fresh(Policy policy, long nowMicros) {
        return withDebts(policy, nowMicros, TokenBucket.initialDebts(policy.limits()));
    }

    static Bucket withDebts(Policy policy, long nowMicros, long[] debts) {
        if (policy.hasQuotas()) {
            return new QuotaBucket(policy, nowMicros, debts);
        }
        return policy.limits().size() == 1
                ? new SingleLimitBucket(policy, nowMicros, debts[0])
                : new MultiLimitBucket(policy, nowMicros, debts);
    }

    /** Returns the decision for a request of {@code cost} at {@code nowMicros}, or null to look up again. */
    abstract Decision tryAcquire(long nowMicros, long cost);

    /**
     * Takes {@code cost} ahead of time if it can be had within {@code maxWaitMicros}, and returns how many
     * microseconds the caller must wait before using it; or {@link #DENIED} or {@link #RETRY}. A charge that
     * must land ({@link TokenBucket#mustLand}) takes each limit no deeper than {@code maxDebtMicros} beyond
     * empty: the caller's policy's, which may differ from the bucket's in that alone.
     */
    abstract long reserve(long nowMicros, long cost, long maxWaitMicros, long maxDebtMicros);

    /** Returns each limit's debt at {@code nowMicros} without changing anything, or null if retired. */
    abstract long[] debts(long nowMicros);

    /**
     * Returns whether the bucket is retired, or is forgotten at {@code nowMicros}: every limit has been full
     * for the policy's {@linkplain TokenBucket#retentionMicros retention} (for most policies, 0: full).
     */
    abstract boolean isForgotten(long nowMicros);

    /**
     * Retires this bucket if it is forgotten at {@code nowMicros}, atomically with respect to charges: a
     * charge either lands first (and the bucket stays) or finds the bucket retired. Returns whether the
     * bucket is retired.
     */
    abstract boolean retireIfForgotten(long nowMicros);

    /** Returns whether this bucket must be replaced by a rebased successor before it can be used. */
    abstract boolean needsRebase(long nowMicros);

    /** Retires this bucket and returns each limit's debt at {@code nowMicros}, or null if already retired. */
    abstract long[] retire(long nowMicros);

    /**
     * Retires this bucket and returns each limit's debt at {@code nowMicros}; or null if it was already
     * retired or was forgotten then, so that a successor starts as a new bucket.
     */
    abstract long[] retireUnlessForgotten(long nowMicros);

    /**
     * Retires this bucket and returns its successor under {@code newPolicy}: same debts, counted from
     * {@code nowMicros}, converted if the limits differ; a new bucket if this one was forgotten (under its own
     * policy: for most, full).
     */
    final Bucket successor(Policy newPolicy, long nowMicros) {
        long[] debts = retireUnlessForgotten(nowMicros);
        if (debts == null) {
            return fresh(newPolicy, nowMicros);
        }
        List<Limit> from = policy.limits();
        List<Limit> to = newPolicy.limits();
        if (from.equals(to) && policy.quotas().equals(newPolicy.quotas())) {
            return withDebts(newPolicy, nowMicros, debts);
        }
        long[] converted = new long[to.size() + newPolicy.quotas().size()];
        for (int i = 0; i < to.size() && i < from.size(); i++) {
            converted[i] = TokenBucket.convert(debts[i], from.get(i), to.get(i));
        }
        // a quota keeps what it counted this period, matched by position, as the Redis script keeps it
        for (int q = 0; q < newPolicy.quotas().size() && q < policy.quotas().size(); q++) {
            converted[to.size() + q] = debts[from.size() + q];
        }
        return withDebts(newPolicy, nowMicros, converted);
    }

    final boolean serves(Policy other) {
        return other == policy
                || (other.limits().equals(policy.limits()) && other.quotas().equals(policy.quotas()));
    }

    /**
     * Returns the ticks elapsed from {@code baseMicros} to {@code nowMicros} for a bucket that is not due
     * for rebasing; time never runs backwards.
     */
    static long ticksSince(long baseMicros, long nowMicros, Limit limit) {
        return Math.max(0, nowMicros - baseMicros) * limit.refill().ticksPerMicrosecond();
    }

    /**
     * Returns whether a limit that is full again {@code fullAt} ticks after {@code baseMicros} has been full
     * for {@code retentionMicros} at {@code nowMicros}, however long ago the base was.
     */
    static boolean fullFor(long fullAt, long baseMicros, long nowMicros, Limit limit, long retentionMicros) {
        return nowMicros - baseMicros - TokenBucket.untilFullMicros(fullAt, limit) >= retentionMicros;
    }

    /**
     * Returns the debt at {@code nowMicros} of a limit that is full again {@code fullAt} ticks after {@code
     * baseMicros}, however long ago the base was.
     */
    static long debtAt(long fullAt, long baseMicros, long nowMicros, Limit limit) {
        return TokenBucket.debtAfter(fullAt, Math.max(0, nowMicros - baseMicros), limit);
    }

    /** Returns how long after its base a bucket of these limits may be used before it must be rebased. */
    static long maxAgeMicros(List<Limit> limits) {
        long maxAge = Long.MAX_VALUE;
        for (Limit limit : limits) {
            maxAge = Math.min(maxAge, MAX_TICKS_SINCE_BASE / limit.refill().ticksPerMicrosecond());
        }
        return maxAge;
    }
}
