package io.tollgate.redis;

import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.internal.TokenBucket;
import java.util.List;

/**
 * What Redis reported for one request: the time it decided, and the debt of each limit of the bucket just
 * before the request (after refill, and conversion if the policy changed). Everything else, whether the
 * request passed included, follows from these through {@link TokenBucket}, the arithmetic that both scripts
 * repeat: the script charged the request exactly when {@link #decision} allows it.
 *
 * @param nowMicros Redis's time of the decision (or the caller's, with a client clock), in microseconds
 * @param debtsBefore the debt of each limit, in the order of the policy's limits, in ticks
 */
record ScriptReply(long nowMicros, long[] debtsBefore) {

    /** Reads the reply of {@code token_bucket.lua}: {@code {now, D1, D2, ...}}. */
    static ScriptReply of(List<Object> reply) {
        long[] debts = new long[reply.size() - 1];
        for (int i = 0; i < debts.length; i++) {
            debts[i] = (Long) reply.get(1 + i);
        }
        return new ScriptReply((Long) reply.get(0), debts);
    }

    /** Returns the decision on a request of {@code cost} whose caller waits up to {@code maxWaitMicros}. */
    Decision decision(Policy policy, long cost, long maxWaitMicros) {
        return TokenBucket.decide(policy.limits(), debtsBefore, cost, maxWaitMicros);
    }

    /**
     * Returns the debts once the request is decided, as a new array: charged if it was allowed, as they were
     * if not.
     */
    long[] debtsAfter(Policy policy, long cost, boolean allowed) {
        return allowed ? TokenBucket.charged(policy.limits(), debtsBefore, cost) : debtsBefore.clone();
    }

    /** Returns how long a caller that reserved tokens ahead must wait before using them, in µs. */
    long waitMicros(Policy policy, long cost) {
        return TokenBucket.waitMicros(policy.limits(), debtsBefore, cost);
    }
}
