package io.tollgate;

import java.util.List;

/**
 * The token bucket arithmetic that every backend reproduces, in exact integers. This class is the
 * reference: the Redis script performs the same steps in the same order.
 *
 * <h2>Units</h2>
 *
 * Time is counted in ticks of 1/N µs and one token is worth P ticks, where N and P are {@link
 * Rate#ticksPerMicrosecond()} and {@link Rate#ticksPerToken()} of the limit's rate. An empty bucket takes
 * {@code fill = capacity × P} ticks to fill up, at most 2<sup>52</sup> ({@link Limit}).
 *
 * <h2>State</h2>
 *
 * A bucket is one number, its <em>debt</em>: the ticks until it is full again (the generic cell rate
 * algorithm's theoretical arrival time, minus now). Zero is a full bucket, {@code fill} an empty one; the
 * bucket holds {@code (fill - debt) / P} tokens. As time passes, the debt falls by N ticks per microsecond
 * until it reaches zero.
 *
 * <h2>Step</h2>
 *
 * A request of cost k at a moment when the debt is d computes {@code d' = d + k × P}. It passes at once
 * if {@code d' <= fill}; a caller willing to wait w µs may take the tokens ahead of time if {@code
 * ceil((d' - fill) / N) <= w}. Debt never exceeds {@code 2^53 - fill}, so that no value the step computes
 * exceeds 2<sup>53</sup>, where doubles (Lua's numbers) stop being exact. If the request passes, the debt
 * becomes d'; otherwise it stays d. Nothing here rounds except the conversion of results to
 * microseconds, which rounds up.
 *
 * <p>Public only for backends that keep the debts elsewhere and work out decisions from them ({@link
 * #decide(List, long[], long, long)}), as {@code tollgate-redis} does with the debts its scripts report, and
 * keep a copy of those debts; applications have no need of it. Stateless and thread-safe.
 */
public final class TokenBucket {

    /** No value the step computes exceeds this: the largest integer range that doubles represent exactly. */
    public static final long MAX_TICKS = 1L << 53;

    private TokenBucket() {}

    /**
     * Returns the debt {@code elapsedMicros} after a moment when it was {@code debt}: it falls by N ticks
     * per microsecond, to zero and no further. Compares in microseconds first, so that no product
     * overflows however long ago that moment was.
     */
    public static long debtAfter(long debt, long elapsedMicros, Limit limit) {
        long ticksPerMicro = limit.refill().ticksPerMicrosecond();
        return elapsedMicros >= ceilDiv(debt, ticksPerMicro) ? 0 : debt - elapsedMicros * ticksPerMicro;
    }

    /** Returns the debt once a request of {@code cost} is charged to a bucket whose debt is {@code debt}. */
    public static long charge(long debt, long cost, Limit limit) {
        return debt + cost * limit.refill().ticksPerToken();
    }

    /**
     * Returns whether a call of {@code cost} that waits up to {@code maxWaitMicros} is a charge that must land
     * whatever the bucket holds: a cost known after the fact, or what a failure policy admitted. It is taken in
     * full, but no deeper than the policy's maximum debt ({@link #chargedAfterTheFact}).
     */
    public static boolean mustLand(long cost, long maxWaitMicros) {
        return cost > 0 && maxWaitMicros >= MAX_TICKS;
    }

    /**
     * Returns the deepest debt a charge after the fact may leave in a bucket of {@code limit}: a full bucket's
     * fill and {@code maxDebtMicros} of refill beyond it, and never more than exact arithmetic counts ({@code
     * 2^53 - fill}). The Redis scripts compute the same.
     */
    public static long debtBound(Limit limit, long maxDebtMicros) {
        long fill = limit.fillTicks();
        long ceiling = MAX_TICKS - fill;
        long ticksPerMicro = limit.refill().ticksPerMicrosecond();
        return maxDebtMicros > (ceiling - fill) / ticksPerMicro ? ceiling : fill + maxDebtMicros * ticksPerMicro;
    }

    /**
     * Returns the debt once a charge after the fact of {@code cost} is taken from a bucket whose debt is
     * {@code debt}: all of it, as far as {@link #debtBound} allows; a bucket already that deep keeps its debt.
     */
    public static long chargedAfterTheFact(long debt, long cost, Limit limit, long maxDebtMicros) {
        long charged = charge(debt, cost, limit);
        long bound = debtBound(limit, maxDebtMicros);
        return charged <= bound ? charged : Math.max(debt, bound);
    }

    /**
     * Returns the debts of every limit once a charge after the fact of {@code cost} is taken, as a new array:
     * each as {@link #chargedAfterTheFact} says.
     */
    public static long[] chargedAfterTheFact(List<Limit> limits, long[] debts, long cost, long maxDebtMicros) {
        long[] after = new long[limits.size()];
        for (int i = 0; i < after.length; i++) {
            after[i] = chargedAfterTheFact(debts[i], cost, limits.get(i), maxDebtMicros);
        }
        return after;
    }

    /**
     * Returns the microseconds until a bucket whose debt would become {@code chargedDebt} can accept the
     * charge: zero if it can now.
     */
    public static long waitMicros(long chargedDebt, Limit limit) {
        long excess = chargedDebt - limit.fillTicks();
        return excess <= 0 ? 0 : ceilDiv(excess, limit.refill().ticksPerMicrosecond());
    }

    /** Returns whether the charge that would make the debt {@code chargedDebt} may be taken within maxWait. */
    public static boolean fits(long chargedDebt, Limit limit, long maxWaitMicros) {
        long fill = limit.fillTicks();
        if (maxWaitMicros == 0) {
            return chargedDebt <= fill; // the common case, without a division
        }
        return chargedDebt <= MAX_TICKS - fill && waitMicros(chargedDebt, limit) <= maxWaitMicros;
    }

    /** Returns the whole tokens in a bucket whose debt is {@code debt}. */
    public static long remaining(long debt, Limit limit) {
        long fill = limit.fillTicks();
        return debt >= fill ? 0 : (fill - debt) / limit.refill().ticksPerToken();
    }

    /** Returns the microseconds until a bucket whose debt is {@code debt} is full, rounded up. */
    public static long untilFullMicros(long debt, Limit limit) {
        return ceilDiv(debt, limit.refill().ticksPerMicrosecond());
    }

    /**
     * Decides a request of {@code cost} against a one-limit policy whose bucket had {@code debtBefore}.
     * The caller has charged the bucket if, and only if, the request fits without waiting.
     */
    public static Decision decide(Limit limit, long debtBefore, long cost) {
        long charged = charge(debtBefore, cost, limit);
        boolean allowed = fits(charged, limit, 0);
        return decision(allowed, limit, 0, allowed ? charged : debtBefore, allowed ? 0 : waitMicros(charged, limit));
    }

    /**
     * Decides a request of {@code cost} against every limit of a policy whose buckets had {@code
     * debtsBefore} (ticks, in the order of {@code limits}), for a caller willing to wait up to {@code
     * maxWaitMicros}. The request passes if it fits every limit, and the caller must then charge each limit
     * {@code cost} times its rate's ticks per token; a refused request charges nothing. The decision reports
     * the limit with the fewest tokens left if it passes, else the one that keeps it waiting longest. The
     * arguments are not checked: costs and debts must be those of a valid request and bucket.
     */
    public static Decision decide(List<Limit> limits, long[] debtsBefore, long cost, long maxWaitMicros) {
        boolean allowed = allFit(limits, debtsBefore, cost, maxWaitMicros);
        int reported = 0;
        long reportedWait = -1;
        long reportedRemaining = Long.MAX_VALUE;
        for (int i = 0; i < limits.size(); i++) {
            Limit limit = limits.get(i);
            long charged = charge(debtsBefore[i], cost, limit);
            if (allowed) {
                long remaining = remaining(charged, limit);
                if (remaining < reportedRemaining) {
                    reported = i;
                    reportedRemaining = remaining;
                }
            } else {
                long wait = waitMicros(charged, limit);
                if (wait > reportedWait) {
                    reported = i;
                    reportedWait = wait;
                }
            }
        }
        Limit limit = limits.get(reported);
        long debtAfter = allowed ? charge(debtsBefore[reported], cost, limit) : debtsBefore[reported];
        return decision(allowed, limit, reported, debtAfter, allowed ? 0 : reportedWait);
    }

    /** Returns whether a request of {@code cost} fits every limit within {@code maxWaitMicros}. */
    public static boolean allFit(List<Limit> limits, long[] debts, long cost, long maxWaitMicros) {
        for (int i = 0; i < limits.size(); i++) {
            if (!fits(charge(debts[i], cost, limits.get(i)), limits.get(i), maxWaitMicros)) {
                return false;
            }
        }
        return true;
    }

    /** Returns the longest wait, in µs, that charging {@code cost} to every limit implies. */
    public static long waitMicros(List<Limit> limits, long[] debts, long cost) {
        long wait = 0;
        for (int i = 0; i < limits.size(); i++) {
            wait = Math.max(wait, waitMicros(charge(debts[i], cost, limits.get(i)), limits.get(i)));
        }
        return wait;
    }

    /**
     * Returns how long a bucket of these limits is kept once every limit is full, before it is forgotten and
     * a request finds a new bucket in its place: 0 when every limit's new buckets start full (a full bucket is
     * then the same as a new one); else the longest time any of the limits takes to fill from empty, so that a
     * bucket with initial tokens does not drop back to them the moment it is full.
     */
    public static long retentionMicros(List<Limit> limits) {
        long retention = 0;
        for (Limit limit : limits) {
            if (limit.initialTokens() != limit.capacity()) {
                for (Limit each : limits) {
                    retention = Math.max(retention, untilFullMicros(each.fillTicks(), each));
                }
                return retention;
            }
        }
        return 0;
    }

    /**
     * Returns whether a bucket whose debts were {@code debts} {@code elapsedMicros} ago has been full for at
     * least its {@link #retentionMicros}: it is forgotten, and a request finds a new bucket.
     */
    public static boolean forgotten(List<Limit> limits, long[] debts, long elapsedMicros) {
        long retention = retentionMicros(limits);
        for (int i = 0; i < debts.length; i++) {
            if (elapsedMicros - untilFullMicros(debts[i], limits.get(i)) < retention) {
                return false;
            }
        }
        return true;
    }

    /** Returns the debts of a new bucket of {@code limits}: 0 for each that starts full. */
    public static long[] initialDebts(List<Limit> limits) {
        long[] debts = new long[limits.size()];
        for (int i = 0; i < debts.length; i++) {
            debts[i] = limits.get(i).initialDebtTicks();
        }
        return debts;
    }

    /**
     * Returns the debts of every limit once {@code cost} is charged to buckets whose debts are {@code debts},
     * as a new array. A negative cost gives tokens back (a refund): the debt falls by as much, and no lower
     * than zero, a full bucket.
     */
    public static long[] charged(List<Limit> limits, long[] debts, long cost) {
        long[] after = new long[debts.length];
        for (int i = 0; i < after.length; i++) {
            after[i] = Math.max(0, charge(debts[i], cost, limits.get(i)));
        }
        return after;
    }

    /**
     * Returns the debt a bucket of limit {@code to} starts with when its policy changes from limit {@code
     * from}, under which its debt was {@code debt}: it keeps the tokens it has spent (a token partly refilled
     * counts as spent), up to the new capacity, so that a client that had spent 3 of 5 tokens has 7 of a new
     * 10, or none of a new 3. A full bucket stays full: it is the same as no bucket, which starts full under
     * any limit, so whether a full bucket was still held (or its Redis key not yet expired) never changes a
     * decision.
     */
    public static long convert(long debt, Limit from, Limit to) {
        if (debt == 0) {
            return 0;
        }
        long spent = Math.min(from.capacity() - remaining(debt, from), to.capacity());
        return spent * to.refill().ticksPerToken();
    }

    /** Returns ⌈a / b⌉ for a ≥ 0 and b > 0. */
    public static long ceilDiv(long a, long b) {
        if (b == 1) {
            return a; // most rates, such as 10/s or 1000/h, count one tick per microsecond
        }
        long quotient = a / b;
        return quotient * b == a ? quotient : quotient + 1;
    }

    private static Decision decision(boolean allowed, Limit limit, int index, long debtAfter, long retryMicros) {
        return new Decision(
                allowed, limit, index, remaining(debtAfter, limit), retryMicros, untilFullMicros(debtAfter, limit));
    }
}
