package io.tollgate;

import java.util.Arrays;
import java.util.List;

/**
 * The arithmetic of a whole policy: its token bucket limits ({@link TokenBucket}) and its calendar quotas
 * together, on one state array that every backend keeps per key: the debt of each limit, in ticks and in the
 * order of the policy's limits, then the tokens each quota has counted in the period that holds the moment
 * of the decision. A policy without quotas goes straight to {@link TokenBucket}.
 *
 * <p>A quota has room for a request if its count so far plus the cost is within its count. It never waits:
 * a caller willing to wait is served from the current period or not at all, except a charge that must land
 * whatever the state ({@code maxWaitMicros} of {@link TokenBucket#MAX_TICKS} or more), which counts beyond
 * the quota, and a refund (a negative cost), which counts down to zero.
 *
 * <p>For stores that keep the state elsewhere and work out decisions from it, as {@link TokenBucket} is;
 * applications have no need of it. Stateless and thread-safe.
 */
public final class PolicyArithmetic {

    private PolicyArithmetic() {}

    /** Returns the state of a new key: each limit's initial debt, and nothing counted by any quota. */
    public static long[] initial(Policy policy) {
        long[] debts = TokenBucket.initialDebts(policy.limits());
        return policy.hasQuotas()
                ? Arrays.copyOf(debts, debts.length + policy.quotas().size())
                : debts;
    }

    /**
     * Returns whether a request of {@code cost} fits every limit within {@code maxWaitMicros} and every quota. A
     * charge that must land ({@link TokenBucket#mustLand}) always does, as far as the policy's maximum debt
     * allows ({@link #chargedAfterTheFact}).
     */
    public static boolean allFit(Policy policy, long[] state, long cost, long maxWaitMicros) {
        if (TokenBucket.mustLand(cost, maxWaitMicros)) {
            return true;
        }
        return TokenBucket.allFit(policy.limits(), state, cost, maxWaitMicros)
                && quotasFit(policy, state, cost, maxWaitMicros);
    }

    private static boolean quotasFit(Policy policy, long[] state, long cost, long maxWaitMicros) {
        List<CalendarQuota> quotas = policy.quotas();
        if (quotas.isEmpty() || cost <= 0 || maxWaitMicros >= TokenBucket.MAX_TICKS) {
            return true;
        }
        int base = policy.limits().size();
        for (int q = 0; q < quotas.size(); q++) {
            if (state[base + q] + cost > quotas.get(q).count()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Returns the state once {@code cost} is charged (negative: refunded), as a new array: each limit as
     * {@link TokenBucket#charged} says, each quota's count up or down by the cost, never below zero.
     */
    public static long[] charged(Policy policy, long[] state, long cost) {
        if (!policy.hasQuotas()) {
            return TokenBucket.charged(policy.limits(), state, cost);
        }
        int limits = policy.limits().size();
        long[] after =
                Arrays.copyOf(TokenBucket.charged(policy.limits(), Arrays.copyOf(state, limits), cost), state.length);
        for (int i = limits; i < state.length; i++) {
            after[i] = Math.max(0, state[i] + cost);
        }
        return after;
    }

    /**
     * Returns the state once a charge after the fact of {@code cost} is taken, as a new array: each limit as far
     * as a maximum debt of {@code maxDebtMicros} allows ({@link TokenBucket#chargedAfterTheFact}), each quota's count up by
     * the whole cost (a quota's debt ends with its period).
     */
    public static long[] chargedAfterTheFact(Policy policy, long[] state, long cost, long maxDebtMicros) {
        int limits = policy.limits().size();
        long[] after = TokenBucket.chargedAfterTheFact(policy.limits(), state, cost, maxDebtMicros);
        if (!policy.hasQuotas()) {
            return after;
        }
        after = Arrays.copyOf(after, state.length);
        for (int i = limits; i < state.length; i++) {
            after[i] = state[i] + cost;
        }
        return after;
    }

    /**
     * Returns the state once {@code cost} is taken by a caller that waits up to {@code maxWaitMicros}, given that
     * it fits ({@link #allFit}): a charge that must land as {@link #chargedAfterTheFact} says with a maximum debt
     * of {@code maxDebtMicros} (the caller's policy's), any other as {@link #charged} does.
     */
    public static long[] taken(Policy policy, long[] state, long cost, long maxWaitMicros, long maxDebtMicros) {
        return TokenBucket.mustLand(cost, maxWaitMicros)
                ? chargedAfterTheFact(policy, state, cost, maxDebtMicros)
                : charged(policy, state, cost);
    }

    /** Returns how long a caller that reserved tokens ahead waits: the limits' wait; quotas never wait. */
    public static long waitMicros(Policy policy, long[] state, long cost) {
        return TokenBucket.waitMicros(policy.limits(), state, cost);
    }

    /**
     * Decides a request of {@code cost} at {@code nowMicros} against a key whose state was {@code state}: it
     * passes if every limit and every quota has room, and the caller then charges it as {@link #charged} says.
     * The decision reports, for an allowed request, the limit or quota with the fewest tokens left (limits
     * first on a tie); for a refused one, the one that keeps it waiting longest: a quota without room until
     * the start of its next period.
     */
    public static Decision decide(Policy policy, long[] state, long cost, long maxWaitMicros, long nowMicros) {
        if (!policy.hasQuotas()) {
            return TokenBucket.decide(policy.limits(), state, cost, maxWaitMicros);
        }
        Decision buckets = TokenBucket.decide(policy.limits(), state, cost, maxWaitMicros);
        boolean quotasFit = quotasFit(policy, state, cost, maxWaitMicros);
        boolean allowed = buckets.allowed() && quotasFit;
        // Refused by a quota alone, the limits' report would say allowed: a quota's report replaces it.
        Decision reported = allowed || !buckets.allowed() ? buckets : null;
        List<Limit> limits = policy.limits();
        List<CalendarQuota> quotas = policy.quotas();
        for (int q = 0; q < quotas.size(); q++) {
            CalendarQuota quota = quotas.get(q);
            long used = state[limits.size() + q];
            long next = quota.nextStartMicros(nowMicros);
            boolean fits = used + cost <= quota.count();
            long usedAfter = allowed ? used + cost : used;
            Decision candidate = new Decision(
                    allowed,
                    quota.reportedLimit(),
                    limits.size() + q,
                    Math.max(0, quota.count() - usedAfter),
                    allowed || fits ? 0 : next - nowMicros,
                    usedAfter > 0 ? next - nowMicros : 0);
            if (reported == null
                    || (allowed
                            ? candidate.remaining() < reported.remaining()
                            : candidate.retryAfterMicros() > reported.retryAfterMicros())) {
                reported = candidate;
            }
        }
        return reported;
    }

    /**
     * Returns {@code state} as of the period that holds {@code nowMicros}, for a state last written at {@code
     * writtenMicros}: a quota whose count was made in an earlier period starts again from zero.
     */
    public static long[] inPeriod(Policy policy, long[] state, long writtenMicros, long nowMicros) {
        List<CalendarQuota> quotas = policy.quotas();
        int base = policy.limits().size();
        long[] current = state;
        for (int q = 0; q < quotas.size(); q++) {
            if (current[base + q] != 0 && writtenMicros < quotas.get(q).periodStartMicros(nowMicros)) {
                if (current == state) {
                    current = state.clone();
                }
                current[base + q] = 0;
            }
        }
        return current;
    }
}
