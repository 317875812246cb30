package io.tollgate.redis;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.TimeSource;
import io.tollgate.TokenBucket;
import io.tollgate.guard.StoreAnswer;
import io.tollgate.guard.StoreReply;
import io.tollgate.redis.internal.NotABucketException;
import io.tollgate.redis.internal.ScriptArguments;
import io.tollgate.redis.internal.TokenBucketScript;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * One batch as {@code token_bucket_batch.lua} takes it and answers it: the requests grouped into runs (in a
 * row for one key, policy and cost), packed into the script's keys and arguments, and the script's reply
 * shared out to each request of each run. No I/O: {@link DecisionBatcher} sends the call.
 */
final class BatchScriptCall {

    private BatchScriptCall() {}

    /** The keys and arguments of one call of the batch script. */
    record Arguments(byte[][] keys, byte[][] args) {}

    /**
     * A request waiting in a lane; {@code slot} is its key's hash slot on Redis Cluster, else -1; a {@code
     * charge} takes its cost whatever the bucket holds.
     */
    record Pending(byte[] bucketKey, Policy policy, long cost, boolean charge, int slot, StoreAnswer result) {}

    /** Requests in a row for one key, policy and cost, in arrival order. */
    static final class Run {
        final int policy;
        final Pending first;
        final List<Pending> members = new ArrayList<>(1);

        Run(int policy, Pending first) {
            this.policy = policy;
            this.first = first;
            members.add(first);
        }

        boolean continuedBy(Pending pending) {
            // A charge is a run of its own: the script takes it once, whatever the bucket holds.
            return !first.charge()
                    && !pending.charge()
                    && pending.policy() == first.policy()
                    && pending.cost() == first.cost();
        }
    }

    /**
     * Groups {@code batch} into runs, adds them to {@code runs} in the order the script answers them, and
     * returns the script's keys and arguments. With {@code acrossSlots}, keys of several slots go as arguments
     * after the runs, the first alone as the key.
     *
     * @param arguments a policy's limits as the batch script takes them
     * @param clientClock the caller's clock, or null for Redis's own time
     */
    static Arguments arguments(
            List<Pending> batch,
            List<Run> runs,
            boolean acrossSlots,
            ScriptArguments arguments,
            TimeSource clientClock) {
        Map<KeyBytes, List<Run>> runsOfKey = new LinkedHashMap<>();
        Map<Policy, Integer> policyIndex = new IdentityHashMap<>();
        List<byte[]> policyLimits = new ArrayList<>();
        for (Pending pending : batch) {
            List<Run> ofKey = runsOfKey.computeIfAbsent(new KeyBytes(pending.bucketKey()), k -> new ArrayList<>(1));
            Run last = ofKey.isEmpty() ? null : ofKey.get(ofKey.size() - 1);
            if (last != null && last.continuedBy(pending)) {
                last.members.add(pending);
                continue;
            }
            int policy = policyIndex.computeIfAbsent(pending.policy(), p -> {
                policyLimits.add(arguments.limits(p));
                return policyLimits.size();
            });
            if (pending.charge()) {
                // a charge takes no deeper than the policy's maximum debt, which only charges need
                policyLimits.set(policy - 1, arguments.limitsWithMaxDebt(pending.policy()));
            }
            ofKey.add(new Run(policy, pending));
            runs.add(null); // counted here, placed below
        }
        byte[][] keys = new byte[runsOfKey.size()][];
        boolean severalSlots = acrossSlots
                && batch.stream().anyMatch(p -> p.slot() != batch.get(0).slot());
        byte[][] args = new byte[3 + policyLimits.size() + (severalSlots ? keys.length : 0)][];
        args[0] = TokenBucketScript.nowArgument(clientClock);
        args[1] = TokenBucketScript.ascii(policyLimits.size());
        for (int q = 0; q < policyLimits.size(); q++) {
            args[2 + q] = policyLimits.get(q);
        }
        ByteBuffer packed = ByteBuffer.allocate(ScriptArguments.PACKED_RUN_BYTES * runs.size());
        int key = 0;
        int placed = 0;
        for (Map.Entry<KeyBytes, List<Run>> ofKey : runsOfKey.entrySet()) {
            keys[key++] = ofKey.getKey().bytes();
            boolean sameKey = false;
            for (Run run : ofKey.getValue()) {
                runs.set(placed++, run);
                ScriptArguments.putRun(
                        packed, run.policy, sameKey, run.first.cost(), run.first.charge() ? 0 : run.members.size());
                sameKey = true;
            }
        }
        args[2 + policyLimits.size()] = packed.array();
        if (severalSlots) {
            System.arraycopy(keys, 0, args, 3 + policyLimits.size(), keys.length);
            keys = new byte[][] {keys[0]};
        }
        return new Arguments(keys, args);
    }

    /**
     * Completes each request of a run with the debts just before it, from the script's reply for the run
     * from {@code at} on, and returns where the next run's reply starts. Requests that fit pass and charge
     * the bucket, and the first that does not ends the run: the bucket stays as it is, so the rest see the
     * same debts and are refused alike. The script charged the same.
     */
    static int answer(Run run, long nowMicros, List<Object> replies, int at) {
        NotABucketException keyError = ScriptArguments.notABucket(replies, at);
        if (keyError != null) {
            for (Pending member : run.members) {
                member.result().completeExceptionally(keyError);
            }
            return at + 2;
        }
        List<Limit> limits = run.first.policy().limits();
        long cost = run.first.cost();
        long[] debts = new long[limits.size()];
        for (int i = 0; i < debts.length; i++) {
            debts[i] = (Long) replies.get(at + i);
        }
        if (run.first.charge()) {
            run.first.result().complete(new StoreReply(nowMicros, debts));
            return at + limits.size();
        }
        // Each reply but the run's last is superseded: the guard learns the bucket from the last one only.
        int last = run.members.size() - 1;
        StoreReply refused = null;
        for (int i = 0; i <= last; i++) {
            CompletableFuture<StoreReply> result = run.members.get(i).result();
            if (refused != null) {
                result.complete(i == last ? new StoreReply(nowMicros, refused.debtsBefore()) : refused);
                continue;
            }
            StoreReply reply = new StoreReply(nowMicros, debts, i < last);
            if (TokenBucket.allFit(limits, debts, cost, 0)) {
                debts = TokenBucket.charged(limits, debts, cost);
            } else {
                refused = reply;
            }
            result.complete(reply);
        }
        return at + limits.size();
    }

    /** A key's bytes with value equality, to find a key's position in the batch. */
    private record KeyBytes(byte[] bytes) {
        @Override
        public boolean equals(Object other) {
            return other instanceof KeyBytes that && Arrays.equals(bytes, that.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }
    }
}
