package io.tollgate.redis;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.TimeSource;
import io.tollgate.internal.guard.StoreReply;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The arguments both scripts take and the reply both give, in one place: a policy's limits as {@code
 * "C,P,N;..."} (and {@code "#I;..."} when a new bucket does not start full), the one-decision script's
 * arguments, and the reply {@code [now, debt1, debt2, ...]}.
 *
 * <p>Thread-safe: a policy's arguments are worked out once and cached, in a bounded map.
 */
final class ScriptArguments {

    private static final int MAX_CACHED_POLICIES = 1_024;

    private final TimeSource clientClock;
    private final Map<Policy, byte[][]> byPolicy = new ConcurrentHashMap<>();

    /** @param clientClock the caller's clock, or null for Redis's own time */
    ScriptArguments(TimeSource clientClock) {
        this.clientClock = clientClock;
    }

    /** Returns the caller's clock, or null for Redis's own time. */
    TimeSource clientClock() {
        return clientClock;
    }

    /** Returns the reply of either script for one request as what the buckets held before it. */
    static StoreReply reply(List<Object> reply) {
        long[] debts = new long[reply.size() - 1];
        for (int i = 0; i < debts.length; i++) {
            debts[i] = (Long) reply.get(1 + i);
        }
        return new StoreReply((Long) reply.get(0), debts);
    }

    /** Returns the arguments of token_bucket.lua for one request. */
    byte[][] of(Policy policy, long cost, long maxWaitMicros) {
        byte[][] fixed = policyArguments(policy);
        byte[][] args = new byte[fixed.length + 3][];
        args[0] = TokenBucketScript.nowArgument(clientClock);
        args[1] = TokenBucketScript.ascii(cost);
        args[2] = TokenBucketScript.ascii(maxWaitMicros);
        System.arraycopy(fixed, 0, args, 3, fixed.length);
        return args;
    }

    /**
     * Returns the policy's limits as both scripts take and store them: {@code "C,P,N;..."}, and {@code "#I;..."}
     * with the debt of a new bucket of each limit when any does not start full.
     */
    byte[] limits(Policy policy) {
        return policyArguments(policy)[0];
    }

    /**
     * Returns the policy's part of the one-decision script's arguments: its limits as {@link #limits} gives
     * them, then C, P, N and the debt of a new bucket of each limit.
     */
    private byte[][] policyArguments(Policy policy) {
        byte[][] cached = byPolicy.get(policy);
        if (cached != null) {
            return cached;
        }
        List<Limit> limits = policy.limits();
        byte[][] args = new byte[1 + 4 * limits.size()][];
        List<String> described = new ArrayList<>();
        List<String> initial = new ArrayList<>();
        for (int i = 0; i < limits.size(); i++) {
            Limit limit = limits.get(i);
            long[] cpni = {
                limit.capacity(),
                limit.refill().ticksPerToken(),
                limit.refill().ticksPerMicrosecond(),
                limit.initialDebtTicks()
            };
            described.add(cpni[0] + "," + cpni[1] + "," + cpni[2]);
            initial.add(Long.toString(cpni[3]));
            for (int j = 0; j < 4; j++) {
                args[1 + 4 * i + j] = TokenBucketScript.ascii(cpni[j]);
            }
        }
        boolean allFull = limits.stream().allMatch(limit -> limit.initialTokens() == limit.capacity());
        String text = String.join(";", described) + (allFull ? "" : "#" + String.join(";", initial));
        args[0] = text.getBytes(StandardCharsets.US_ASCII);
        if (byPolicy.size() >= MAX_CACHED_POLICIES) {
            byPolicy.clear(); // policies made on the fly: keep the cache bounded
        }
        byPolicy.put(policy, args);
        return args;
    }
}
