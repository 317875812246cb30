package io.tollgate.redis;

import io.tollgate.Decision;
import io.tollgate.Policy;
import java.util.List;

/**
 * The reply of {@code token_bucket.lua}: {@code {allowed, index, remaining, retry µs, reset µs, wait µs}}.
 *
 * @param allowed whether the request passed and was charged
 * @param index the position of the reported limit in the policy
 * @param remaining whole tokens left in that limit
 * @param retryMicros for a refused request, microseconds until it could pass; 0 when allowed
 * @param resetMicros microseconds until that limit is full again
 * @param waitMicros for a request that reserved tokens ahead, microseconds before it may proceed
 */
record ScriptReply(boolean allowed, int index, long remaining, long retryMicros, long resetMicros, long waitMicros) {

    static ScriptReply of(List<Object> reply) {
        return new ScriptReply(
                (Long) reply.get(0) == 1,
                ((Long) reply.get(1)).intValue(),
                (Long) reply.get(2),
                (Long) reply.get(3),
                (Long) reply.get(4),
                (Long) reply.get(5));
    }

    /** The reply that decides as {@code decision} does, for a request that did not wait. */
    static ScriptReply of(Decision decision) {
        return new ScriptReply(
                decision.allowed(),
                decision.limitIndex(),
                decision.remaining(),
                decision.retryAfterMicros(),
                decision.resetAfterMicros(),
                0);
    }

    Decision decision(Policy policy) {
        return new Decision(allowed, policy.limits().get(index), index, remaining, retryMicros, resetMicros);
    }
}
