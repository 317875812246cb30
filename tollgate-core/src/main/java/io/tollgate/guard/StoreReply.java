package io.tollgate.guard;

import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.PolicyArithmetic;

/**
 * What the store reported for one request: the time it decided, and the debt of each limit of the bucket just
 * before the request (after refill, and conversion if the policy changed). Everything else, whether the
 * request passed included, follows from these through {@link PolicyArithmetic}, the arithmetic that both scripts
 * repeat: the script charged the request exactly when {@link #decision} allows it.
 *
 * @param nowMicros the store's time of the decision (or the caller's, with a client clock), in microseconds
 * @param debtsBefore the debt of each limit, in the order of the policy's limits, in ticks; then, for a policy
 *     with calendar quotas, what each counted in the period that holds {@code nowMicros}
 * @param superseded whether a later reply of the same store call reports on the same bucket after this
 *     request, so that this one need not teach this instance what the bucket holds (the later one will): a
 *     hot key's batch of hundreds of requests then updates what this instance knows once, not once each
 */
public record StoreReply(long nowMicros, long[] debtsBefore, boolean superseded) {

    /** A reply that no later one supersedes. */
    public StoreReply(long nowMicros, long[] debtsBefore) {
        this(nowMicros, debtsBefore, false);
    }

    /** Returns the decision on a request of {@code cost} whose caller waits up to {@code maxWaitMicros}. */
    Decision decision(Policy policy, long cost, long maxWaitMicros) {
        return PolicyArithmetic.decide(policy, debtsBefore, cost, maxWaitMicros, nowMicros);
    }

    /**
     * Returns the debts once the request is decided, as a new array: charged if it was allowed, as they were
     * if not.
     */
    long[] debtsAfter(Policy policy, long cost, boolean allowed) {
        return allowed ? PolicyArithmetic.charged(policy, debtsBefore, cost) : debtsBefore.clone();
    }

    /**
     * Returns the debts after a charge of {@code cost} (negative for a refund) that the store applied exactly
     * when every limit fit within {@code maxWaitMicros}, as a new array: for charges whose decision nobody
     * waits for. A charge that must land took what the policy's maximum debt allows.
     */
    long[] debtsAfterCharge(Policy policy, long cost, long maxWaitMicros) {
        return PolicyArithmetic.allFit(policy, debtsBefore, cost, maxWaitMicros)
                ? PolicyArithmetic.taken(policy, debtsBefore, cost, maxWaitMicros, policy.maxDebtMicros())
                : debtsBefore.clone();
    }

    /** Returns how long a caller that reserved tokens ahead must wait before using them, in µs. */
    long waitMicros(Policy policy, long cost) {
        return PolicyArithmetic.waitMicros(policy, debtsBefore, cost);
    }
}
