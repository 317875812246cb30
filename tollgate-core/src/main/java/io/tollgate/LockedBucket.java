package io.tollgate;

/**
 * A bucket whose state is an array (each limit's debt, then each quota's count) checked and charged under the
 * bucket's own lock, so that a request takes from all of it or from none: several limits ({@link
 * MultiLimitBucket}) or quotas ({@link QuotaBucket}). Both decide with {@link PolicyArithmetic}, which for a
 * policy without quotas is {@link io.tollgate.TokenBucket}'s arithmetic on its limits.
 */
abstract sealed class LockedBucket extends Bucket permits MultiLimitBucket, QuotaBucket {

    /** Guarded by this: whether this bucket was replaced or evicted, and refuses every update. */
    boolean retired;

    LockedBucket(Policy policy) {
        super(policy);
    }

    @Override
    final Decision tryAcquire(long nowMicros, long cost) {
        long[] before = take(nowMicros, cost, 0, 0);
        return before == null ? null : PolicyArithmetic.decide(policy, before, cost, 0, nowMicros);
    }

    @Override
    final long reserve(long nowMicros, long cost, long maxWaitMicros, long maxDebtMicros) {
        long[] before = take(nowMicros, cost, maxWaitMicros, maxDebtMicros);
        if (before == null) {
            return RETRY;
        }
        return PolicyArithmetic.allFit(policy, before, cost, maxWaitMicros)
                ? PolicyArithmetic.waitMicros(policy, before, cost)
                : DENIED;
    }

    /**
     * Charges everything if {@code cost} fits within {@code maxWaitMicros} (a charge that must land, no deeper
     * than {@code maxDebtMicros}), and returns the state just before; null if retired.
     */
    abstract long[] take(long nowMicros, long cost, long maxWaitMicros, long maxDebtMicros);

    /** The state at {@code nowMicros}: each limit's debt, then each quota's count in its period. Under the lock. */
    abstract long[] stateNow(long nowMicros);

    /** Whether every limit has been full for the retention time, so the key is forgotten. Under the lock. */
    abstract boolean forgotten(long nowMicros);

    @Override
    final synchronized long[] debts(long nowMicros) {
        return retired ? null : stateNow(nowMicros);
    }

    @Override
    final synchronized boolean isForgotten(long nowMicros) {
        return retired || forgotten(nowMicros);
    }

    @Override
    final synchronized boolean retireIfForgotten(long nowMicros) {
        if (!retired && forgotten(nowMicros)) {
            retired = true;
        }
        return retired;
    }

    @Override
    final boolean needsRebase(long nowMicros) {
        return false; // kept under the lock: rebased in place, or as of the last write
    }

    @Override
    final synchronized long[] retireUnlessForgotten(long nowMicros) {
        boolean wasForgotten = !retired && forgotten(nowMicros);
        long[] now = retire(nowMicros);
        return wasForgotten ? null : now;
    }

    @Override
    final synchronized long[] retire(long nowMicros) {
        if (retired) {
            return null;
        }
        retired = true;
        return stateNow(nowMicros);
    }
}
