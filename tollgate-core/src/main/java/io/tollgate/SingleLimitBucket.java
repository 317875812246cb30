package io.tollgate;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** The buckets of a one-limit policy: a single word updated by compare-and-set, with no lock. */
final class SingleLimitBucket extends Bucket {

    private static final long RETIRED = Long.MIN_VALUE;
    private static final VarHandle FULL_AT;

    static {
        try {
            FULL_AT = MethodHandles.lookup().findVarHandle(SingleLimitBucket.class, "fullAt", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Limit limit;
    private final long baseMicros;
    private final long maxAgeMicros;
    private final long retentionMicros;

    /** Ticks since the base at which the bucket is full again; {@link #RETIRED} once retired. */
    @SuppressWarnings("unused") // accessed through FULL_AT
    private volatile long fullAt;

    SingleLimitBucket(Policy policy, long baseMicros, long debt) {
        super(policy);
        this.limit = policy.limits().get(0);
        this.baseMicros = baseMicros;
        this.maxAgeMicros = maxAgeMicros(policy.limits());
        this.retentionMicros = TokenBucket.retentionMicros(policy.limits());
        this.fullAt = debt;
    }

    @Override
    Decision tryAcquire(long nowMicros, long cost) {
        long debt = take(nowMicros, cost, 0, 0);
        return debt == RETRY ? null : TokenBucket.decide(limit, debt, cost);
    }

    @Override
    long reserve(long nowMicros, long cost, long maxWaitMicros, long maxDebtMicros) {
        long debt = take(nowMicros, cost, maxWaitMicros, maxDebtMicros);
        if (debt == RETRY) {
            return RETRY;
        }
        if (TokenBucket.mustLand(cost, maxWaitMicros)) {
            return TokenBucket.waitMicros(TokenBucket.chargedAfterTheFact(debt, cost, limit, maxDebtMicros), limit);
        }
        long charged = TokenBucket.charge(debt, cost, limit);
        return TokenBucket.fits(charged, limit, maxWaitMicros) ? TokenBucket.waitMicros(charged, limit) : DENIED;
    }

    /**
     * Charges {@code cost} if it fits within {@code maxWaitMicros} and returns the debt the bucket had just
     * before, or {@link #RETRY}.
     */
    private long take(long nowMicros, long cost, long maxWaitMicros, long maxDebtMicros) {
        if (needsRebase(nowMicros)) {
            return RETRY;
        }
        long nowTicks = ticksSince(baseMicros, nowMicros, limit);
        long current = (long) FULL_AT.getVolatile(this);
        for (; ; ) {
            if (current == RETIRED) {
                return RETRY;
            }
            long debt = current > nowTicks ? current - nowTicks : 0;
            // Forgotten, it is a new bucket; a new one that does not start full begins now.
            boolean fresh = retentionMicros > 0 && fullFor(current, baseMicros, nowMicros, limit, retentionMicros);
            if (fresh) {
                debt = limit.initialDebtTicks();
            }
            // A refund (a negative cost) fills the bucket and no further, so it never reads as long forgotten.
            boolean mustLand = TokenBucket.mustLand(cost, maxWaitMicros);
            long charged = mustLand
                    ? TokenBucket.chargedAfterTheFact(debt, cost, limit, maxDebtMicros)
                    : Math.max(0, TokenBucket.charge(debt, cost, limit));
            boolean fits = mustLand || TokenBucket.fits(charged, limit, maxWaitMicros);
            if (!fits && !fresh) {
                return debt;
            }
            // On failure the exchange returns the value that won, saving a read of the contended word.
            long witness = (long) FULL_AT.compareAndExchange(this, current, nowTicks + (fits ? charged : debt));
            if (witness == current) {
                return debt;
            }
            current = witness;
        }
    }

    @Override
    long[] debts(long nowMicros) {
        long current = (long) FULL_AT.getVolatile(this);
        return current == RETIRED ? null : new long[] {debtAt(current, baseMicros, nowMicros, limit)};
    }

    @Override
    boolean isForgotten(long nowMicros) {
        long current = (long) FULL_AT.getVolatile(this);
        return current == RETIRED || fullFor(current, baseMicros, nowMicros, limit, retentionMicros);
    }

    @Override
    boolean retireIfForgotten(long nowMicros) {
        for (; ; ) {
            long current = (long) FULL_AT.getVolatile(this);
            if (current == RETIRED) {
                return true;
            }
            if (!fullFor(current, baseMicros, nowMicros, limit, retentionMicros)) {
                return false;
            }
            if (FULL_AT.compareAndSet(this, current, RETIRED)) {
                return true;
            }
        }
    }

    @Override
    boolean needsRebase(long nowMicros) {
        return nowMicros - baseMicros > maxAgeMicros;
    }

    @Override
    long[] retireUnlessForgotten(long nowMicros) {
        long last = (long) FULL_AT.getAndSet(this, RETIRED);
        if (last == RETIRED || fullFor(last, baseMicros, nowMicros, limit, retentionMicros)) {
            return null;
        }
        return new long[] {debtAt(last, baseMicros, nowMicros, limit)};
    }

    @Override
    long[] retire(long nowMicros) {
        long last = (long) FULL_AT.getAndSet(this, RETIRED);
        if (last == RETIRED) {
            return null;
        }
        return new long[] {debtAt(last, baseMicros, nowMicros, limit)};
    }
}
