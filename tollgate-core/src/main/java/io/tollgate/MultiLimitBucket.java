package io.tollgate;

import java.util.List;

/**
 * The buckets of a policy with several limits, all checked and charged under the bucket's own lock so
 * that a request takes from all of them or from none.
 */
final class MultiLimitBucket extends LockedBucket {

    private final List<Limit> limits;
    private final long maxAgeMicros;
    private final long retentionMicros;

    // Guarded by this. fullAt[i]: ticks since baseMicros at which limit i is full again.
    private long baseMicros;
    private final long[] fullAt;

    MultiLimitBucket(Policy policy, long baseMicros, long[] debts) {
        super(policy);
        this.limits = policy.limits();
        this.maxAgeMicros = maxAgeMicros(limits);
        this.retentionMicros = TokenBucket.retentionMicros(limits);
        this.baseMicros = baseMicros;
        this.fullAt = debts.clone();
    }

    /**
     * Charges every limit if {@code cost} fits all of them within {@code maxWaitMicros}, and returns the
     * debts they had just before; null if retired.
     */
    @Override
    synchronized long[] take(long nowMicros, long cost, long maxWaitMicros, long maxDebtMicros) {
        if (retired) {
            return null;
        }
        if (nowMicros - baseMicros > maxAgeMicros) {
            // A lock is held anyway, so rebase in place instead of asking for a successor.
            long[] debts = stateNow(nowMicros);
            System.arraycopy(debts, 0, fullAt, 0, debts.length);
            baseMicros = nowMicros;
        }
        // Forgotten, it is a new bucket; a new one that does not start full begins now.
        long[] debts =
                retentionMicros > 0 && forgotten(nowMicros) ? TokenBucket.initialDebts(limits) : stateNow(nowMicros);
        long[] after = PolicyArithmetic.allFit(policy, debts, cost, maxWaitMicros)
                ? PolicyArithmetic.taken(policy, debts, cost, maxWaitMicros, maxDebtMicros)
                : debts; // unchanged, unless a new bucket that does not start full begins now
        for (int i = 0; i < limits.size(); i++) {
            fullAt[i] = ticksSince(baseMicros, nowMicros, limits.get(i)) + after[i];
        }
        return debts;
    }

    @Override
    long[] stateNow(long nowMicros) {
        long[] debts = new long[limits.size()];
        for (int i = 0; i < debts.length; i++) {
            debts[i] = debtAt(fullAt[i], baseMicros, nowMicros, limits.get(i));
        }
        return debts;
    }

    @Override
    boolean forgotten(long nowMicros) {
        for (int i = 0; i < limits.size(); i++) {
            if (!fullFor(fullAt[i], baseMicros, nowMicros, limits.get(i), retentionMicros)) {
                return false;
            }
        }
        return true;
    }
}
