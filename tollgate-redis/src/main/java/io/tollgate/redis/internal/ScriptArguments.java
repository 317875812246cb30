package io.tollgate.redis.internal;

import io.tollgate.CalendarQuota;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.TimeSource;
import io.tollgate.TokenBucket;
import io.tollgate.guard.StoreReply;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The arguments both scripts take and the reply both give, in one place: a policy's limits as {@code
 * "C,P,N;..."} (and {@code "#I;..."} when a new bucket does not start full), the one-decision script's
 * arguments (a charge that must land sends its policy's maximum debt in place of a wait), a batch's packed runs, and the reply: {@code [now, debt1, debt2, ...]} for each request or run,
 * or the reply code {@value #NOT_A_BUCKET} and a message for a key that holds no bucket. The benchmark
 * harnesses use it too, so that they call the scripts exactly as the limiter does.
 *
 * <p>Thread-safe: a policy's arguments are worked out once and cached, in a bounded map.
 */
public final class ScriptArguments {

    /** The reply code, where a debt would be, of a key that holds something else than a bucket. */
    public static final long NOT_A_BUCKET = -1;

    /** The bytes of one run in a batch's packed runs. */
    public static final int PACKED_RUN_BYTES = 16;

    private static final int MAX_CACHED_POLICIES = 1_024;

    private final TimeSource clientClock;
    private final Map<Policy, byte[][]> byPolicy = new ConcurrentHashMap<>();

    /** @param clientClock the caller's clock, or null for Redis's own time */
    public ScriptArguments(TimeSource clientClock) {
        this.clientClock = clientClock;
    }

    /** Returns the caller's clock, or null for Redis's own time. */
    public TimeSource clientClock() {
        return clientClock;
    }

    /**
     * Returns the one-decision script's reply as what the buckets held before the request.
     *
     * @throws NotABucketException if the key holds something else than a bucket
     */
    public static StoreReply reply(List<Object> reply) {
        NotABucketException notABucket = notABucket(reply, 1);
        if (notABucket != null) {
            throw notABucket;
        }
        long[] debts = new long[reply.size() - 1];
        for (int i = 0; i < debts.length; i++) {
            debts[i] = (Long) reply.get(1 + i);
        }
        return new StoreReply((Long) reply.get(0), debts);
    }

    /**
     * Returns why the request or run whose reply starts at {@code at} failed, if its key holds something
     * else than a bucket; null if the reply there is debts.
     */
    public static NotABucketException notABucket(List<Object> replies, int at) {
        if (replies.get(at) instanceof Long code && code == NOT_A_BUCKET) {
            Object message = replies.get(at + 1);
            return new NotABucketException(
                    message instanceof byte[] bytes
                            ? new String(bytes, StandardCharsets.UTF_8)
                            : String.valueOf(message));
        }
        return null;
    }

    /**
     * Adds one run to a batch's packed runs: {@code requests} requests in a row of {@code cost} under the
     * batch's {@code policyPosition}-th policy (from 1), for the same key as the run before or for the next.
     */
    public static void putRun(ByteBuffer packed, int policyPosition, boolean sameKeyAsBefore, long cost, int requests) {
        packed.putInt(sameKeyAsBefore ? -policyPosition : policyPosition); // big-endian, as the script reads it
        packed.putLong(cost);
        packed.putInt(requests);
    }

    /**
     * Returns the arguments of token_bucket.lua for one request. For a policy with calendar quotas, each quota
     * adds its count and four period boundaries around this instance's idea of now (the start of the period
     * before, of the current one, of the next and of the one after), so that the script finds the period that
     * holds Redis's own time by comparing, with no time zone rules in Lua.
     */
    public byte[][] of(Policy policy, long cost, long maxWaitMicros) {
        long estimate = clientClock != null
                ? clientClock.nowMicros()
                : policy.hasQuotas() ? Math.multiplyExact(System.currentTimeMillis(), 1_000L) : 0;
        return of(policy, cost, maxWaitMicros, estimate);
    }

    /**
     * Returns the arguments of token_bucket.lua for one request, with the calendar quotas' periods around
     * {@code estimateMicros} (this instance's idea of now; ignored for a policy without quotas). With a client
     * clock, the script's time is the estimate itself.
     */
    public byte[][] of(Policy policy, long cost, long maxWaitMicros, long estimateMicros) {
        byte[][] fixed = policyArguments(policy);
        List<CalendarQuota> quotas = policy.quotas();
        byte[][] args = new byte[fixed.length + 3 + 5 * quotas.size()][];
        args[0] = clientClock == null ? TokenBucketScript.nowArgument(null) : TokenBucketScript.ascii(estimateMicros);
        args[1] = TokenBucketScript.ascii(cost);
        args[2] = TokenBucket.mustLand(cost, maxWaitMicros) ? maxDebt(policy) : TokenBucketScript.ascii(maxWaitMicros);
        System.arraycopy(fixed, 0, args, 3, fixed.length);
        int at = 3 + fixed.length;
        for (CalendarQuota quota : quotas) {
            long current = quota.periodStartMicros(estimateMicros);
            long next = quota.nextStartMicros(estimateMicros);
            args[at++] = TokenBucketScript.ascii(quota.count());
            args[at++] = TokenBucketScript.ascii(quota.periodStartMicros(current - 1));
            args[at++] = TokenBucketScript.ascii(current);
            args[at++] = TokenBucketScript.ascii(next);
            args[at++] = TokenBucketScript.ascii(quota.nextStartMicros(next));
        }
        return args;
    }

    /**
     * Returns the policy's limits as the batch script takes them for a batch that charges under the policy: as
     * {@link #limits} gives them, and {@code "!B"} with its maximum debt B in microseconds.
     */
    public byte[] limitsWithMaxDebt(Policy policy) {
        return (new String(limits(policy), StandardCharsets.US_ASCII) + "!" + maxDebtMicros(policy))
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** The one-decision script's maximum wait for a charge that must land: {@code "d"} and the maximum debt. */
    private static byte[] maxDebt(Policy policy) {
        return ("d" + maxDebtMicros(policy)).getBytes(StandardCharsets.US_ASCII);
    }

    /** The policy's maximum debt in µs, at most 2^53: past it the scripts' bound is exact arithmetic's own. */
    private static long maxDebtMicros(Policy policy) {
        return Math.min(policy.maxDebtMicros(), TokenBucket.MAX_TICKS);
    }

    /**
     * Returns the policy's limits as both scripts take and store them: {@code "C,P,N;..."}, and {@code "#I;..."}
     * with the debt of a new bucket of each limit when any does not start full.
     */
    public byte[] limits(Policy policy) {
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
        if (policy.hasQuotas()) {
            List<String> quotas = new ArrayList<>();
            for (CalendarQuota quota : policy.quotas()) {
                quotas.add(quota.count() + "/" + quota.period().name().toLowerCase(Locale.ROOT) + "/" + quota.zone());
            }
            text += "@" + String.join(";", quotas); // stored with the bucket: a changed quota is a policy change
        }
        args[0] = text.getBytes(StandardCharsets.US_ASCII);
        if (byPolicy.size() >= MAX_CACHED_POLICIES) {
            byPolicy.clear(); // policies made on the fly: keep the cache bounded
        }
        byPolicy.put(policy, args);
        return args;
    }
}
