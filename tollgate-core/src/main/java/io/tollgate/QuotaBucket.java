package io.tollgate;

import java.util.Arrays;
import java.util.List;

/**
 * The buckets and calendar quotas of a policy that holds quotas, checked and charged together under this
 * object's lock: the state {@link PolicyArithmetic} works on (each limit's debt, then each quota's count in
 * its current period), as of the moment it was last written.
 */
final class QuotaBucket extends LockedBucket {

    private final List<Limit> limits;
    private final long retentionMicros;

    // Guarded by this.
    private long writtenMicros;
    private long[] state;

    /** @param state the debts of the limits, and optionally after them the quotas' counts as of baseMicros */
    QuotaBucket(Policy policy, long baseMicros, long[] state) {
        super(policy);
        this.limits = policy.limits();
        this.retentionMicros = TokenBucket.retentionMicros(limits);
        this.writtenMicros = baseMicros;
        this.state = Arrays.copyOf(state, limits.size() + policy.quotas().size());
    }

    /** Charges everything if the cost fits, and returns the state just before; null if retired. */
    @Override
    synchronized long[] take(long nowMicros, long cost, long maxWaitMicros, long maxDebtMicros) {
        if (retired) {
            return null;
        }
        long[] before = stateNow(nowMicros);
        boolean begins = retentionMicros > 0 && bucketsForgotten(nowMicros);
        if (begins) {
            System.arraycopy(TokenBucket.initialDebts(limits), 0, before, 0, limits.size());
        }
        // Written only when something changes, as the Redis script writes: a refusal leaves the time since
        // each bucket was full, which decides when it is forgotten, as it was.
        if (PolicyArithmetic.allFit(policy, before, cost, maxWaitMicros)) {
            state = PolicyArithmetic.taken(policy, before, cost, maxWaitMicros, maxDebtMicros);
            writtenMicros = Math.max(writtenMicros, nowMicros);
        } else if (begins) {
            state = before.clone(); // a new bucket that does not start full begins now, refused or not
            writtenMicros = Math.max(writtenMicros, nowMicros);
        }
        return before;
    }

    @Override
    long[] stateNow(long nowMicros) {
        long elapsed = Math.max(0, nowMicros - writtenMicros);
        long[] now = PolicyArithmetic.inPeriod(policy, state, writtenMicros, nowMicros)
                .clone();
        for (int i = 0; i < limits.size(); i++) {
            now[i] = TokenBucket.debtAfter(state[i], elapsed, limits.get(i));
        }
        return now;
    }

    private boolean bucketsForgotten(long nowMicros) {
        return TokenBucket.forgotten(
                limits, Arrays.copyOf(state, limits.size()), Math.max(0, nowMicros - writtenMicros));
    }

    /** Forgotten: the limits would be (full for their retention) and no quota counted anything this period. */
    @Override
    boolean forgotten(long nowMicros) {
        long[] now = stateNow(nowMicros);
        for (int i = limits.size(); i < now.length; i++) {
            if (now[i] != 0) {
                return false;
            }
        }
        return bucketsForgotten(nowMicros);
    }
}
