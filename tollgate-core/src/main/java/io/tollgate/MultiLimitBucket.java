package io.tollgate;

import java.util.List;

/**
 * The buckets of a policy with several limits, all checked and charged under the bucket's own lock so
 * that a request takes from all of them or from none.
 */
final class MultiLimitBucket extends Bucket {

    private final List<Limit> limits;
    private final long maxAgeMicros;

    // Guarded by this. fullAt[i]: ticks since baseMicros at which limit i is full again.
    private long baseMicros;
    private final long[] fullAt;
    private boolean retired;

    MultiLimitBucket(Policy policy, long baseMicros, long[] debts) {
        super(policy);
        this.limits = policy.limits();
        this.maxAgeMicros = maxAgeMicros(limits);
        this.baseMicros = baseMicros;
        this.fullAt = debts.clone();
    }

    @Override
    Decision tryAcquire(long nowMicros, long cost) {
        long[] debts = take(nowMicros, cost, 0);
        return debts == null ? null : TokenBucket.decide(limits, debts, cost, 0);
    }

    @Override
    long reserve(long nowMicros, long cost, long maxWaitMicros) {
        long[] debts = take(nowMicros, cost, maxWaitMicros);
        if (debts == null) {
            return RETRY;
        }
        return TokenBucket.allFit(limits, debts, cost, maxWaitMicros)
                ? TokenBucket.waitMicros(limits, debts, cost)
                : DENIED;
    }

    /**
     * Charges every limit if {@code cost} fits all of them within {@code maxWaitMicros}, and returns the
     * debts they had just before; null if retired.
     */
    private synchronized long[] take(long nowMicros, long cost, long maxWaitMicros) {
        if (retired) {
            return null;
        }
        if (nowMicros - baseMicros > maxAgeMicros) {
            // A lock is held anyway, so rebase in place instead of asking for a successor.
            long[] debts = debts(nowMicros);
            System.arraycopy(debts, 0, fullAt, 0, debts.length);
            baseMicros = nowMicros;
        }
        long[] debts = debts(nowMicros);
        if (TokenBucket.allFit(limits, debts, cost, maxWaitMicros)) {
            for (int i = 0; i < limits.size(); i++) {
                Limit limit = limits.get(i);
                fullAt[i] = ticksSince(baseMicros, nowMicros, limit) + TokenBucket.charge(debts[i], cost, limit);
            }
        }
        return debts;
    }

    private long[] debts(long nowMicros) {
        long[] debts = new long[limits.size()];
        for (int i = 0; i < debts.length; i++) {
            debts[i] = debtAt(fullAt[i], baseMicros, nowMicros, limits.get(i));
        }
        return debts;
    }

    @Override
    synchronized boolean isFull(long nowMicros) {
        return retired || allFull(nowMicros);
    }

    @Override
    synchronized boolean retireIfFull(long nowMicros) {
        if (!retired && allFull(nowMicros)) {
            retired = true;
        }
        return retired;
    }

    private boolean allFull(long nowMicros) {
        for (int i = 0; i < limits.size(); i++) {
            if (debtAt(fullAt[i], baseMicros, nowMicros, limits.get(i)) > 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    boolean needsRebase(long nowMicros) {
        return false; // rebased in place, under the lock
    }

    @Override
    synchronized long[] retire(long nowMicros) {
        if (retired) {
            return null;
        }
        retired = true;
        return debts(nowMicros);
    }
}
