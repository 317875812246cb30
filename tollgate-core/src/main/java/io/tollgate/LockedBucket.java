package io.tollgate;

import io.tollgate.internal.PolicyArithmetic;

/**
 * A bucket whose state is an array (each limit's debt, then each quota's count) checked and charged under the
 * bucket's own lock, so that a request takes from all of it or from none: several limits ({@link
 * MultiLimitBucket}) or quotas ({@link QuotaBucket}). Both decide with {@link PolicyArithmetic}, which for a
 * policy without quotas is {@link io.tollgate.internal.TokenBucket}'s arithmetic on its limits.
 */
abstract sealed class LockedBucket extends Bucket permits MultiLimitBucket, QuotaBucket {

    LockedBucket(Policy policy) {
        super(policy);
    }

    @Override
    final Decision tryAcquire(long nowMicros, long cost) {
        long[] before = take(nowMicros, cost, 0);
        return before == null ? null : PolicyArithmetic.decide(policy, before, cost, 0, nowMicros);
    }

    @Override
    final long reserve(long nowMicros, long cost, long maxWaitMicros) {
        long[] before = take(nowMicros, cost, maxWaitMicros);
        if (before == null) {
            return RETRY;
        }
        return PolicyArithmetic.allFit(policy, before, cost, maxWaitMicros)
                ? PolicyArithmetic.waitMicros(policy, before, cost)
                : DENIED;
    }

    /**
     * Charges everything if {@code cost} fits within {@code maxWaitMicros}, and returns the state just before;
     * null if retired.
     */
    abstract long[] take(long nowMicros, long cost, long maxWaitMicros);
}
