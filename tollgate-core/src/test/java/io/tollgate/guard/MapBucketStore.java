package io.tollgate.guard;

import io.tollgate.Degradation;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.PolicyArithmetic;
import io.tollgate.Propagation;
import io.tollgate.TimeSource;
import io.tollgate.TokenBucket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * A store written in the conformance kit's tests alone, to show that the seam needs nothing else: buckets in a
 * map, one charge at a time per key, applying {@link PolicyArithmetic} as the Redis scripts do in Lua (a key's
 * state brought to now, converted when its policy changed, begun anew once forgotten; written only when something
 * changes). A store that no other instance shares: its announcements reach nobody.
 */
final class MapBucketStore implements BucketStore<String> {

    /** What a key holds: the policy it was written under, when, and its state then. */
    private record Entry(Policy policy, long writtenMicros, long[] state) {}

    private final ConcurrentMap<String, Entry> buckets = new ConcurrentHashMap<>();
    private final TimeSource clock;

    MapBucketStore(TimeSource clock) {
        this.clock = clock;
    }

    @Override
    public String name() {
        return "Map";
    }

    @Override
    public String address(String key, Policy policy) {
        return policy.name() + ":" + key;
    }

    @Override
    public String nodeOf(String address) {
        return "map";
    }

    @Override
    public String unavailable() {
        return null;
    }

    @Override
    public CompletableFuture<StoreReply> charge(
            String address, Policy policy, long cost, long maxWaitMicros, boolean batchable) {
        long now = clock.nowMicros();
        long[][] before = new long[1][];
        buckets.compute(address, (ignored, entry) -> {
            Entry current = broughtTo(entry, policy, now);
            long[] state = stateAt(current, now);
            before[0] = state;
            if (cost == 0) {
                return entry; // a read writes nothing
            }
            if (PolicyArithmetic.allFit(policy, state, cost, maxWaitMicros)) {
                return new Entry(
                        policy,
                        Math.max(current.writtenMicros, now),
                        PolicyArithmetic.taken(policy, state, cost, maxWaitMicros, policy.maxDebtMicros()));
            }
            // a refusal writes nothing, but a bucket begun or converted now is kept as it begins
            return current == entry ? entry : new Entry(policy, now, state.clone());
        });
        return CompletableFuture.completedFuture(new StoreReply(now, before[0]));
    }

    /**
     * The key's entry under {@code policy} at {@code now}, as the scripts bring a bucket to now: new if absent; its
     * limits begun anew (each with its initial debt) once every one was full for its retention, under the policy
     * it was written with; converted by position if the limits changed (a limit that is new starts full); each
     * quota's count of this period kept by position. The entry itself where nothing changed.
     */
    private static Entry broughtTo(Entry entry, Policy policy, long now) {
        if (entry == null) {
            return new Entry(policy, now, PolicyArithmetic.initial(policy));
        }
        List<Limit> from = entry.policy.limits();
        List<Limit> to = policy.limits();
        boolean forgotten = TokenBucket.forgotten(
                from, Arrays.copyOf(entry.state, from.size()), Math.max(0, now - entry.writtenMicros));
        boolean same = from.equals(to) && entry.policy.quotas().equals(policy.quotas());
        if (same && !forgotten) {
            return entry;
        }
        long[] at = stateAt(entry, now);
        long[] state = new long[to.size() + policy.quotas().size()];
        long[] initial = TokenBucket.initialDebts(to);
        for (int i = 0; i < to.size(); i++) {
            state[i] =
                    forgotten ? initial[i] : i < from.size() ? TokenBucket.convert(at[i], from.get(i), to.get(i)) : 0;
        }
        for (int q = 0; q < policy.quotas().size() && q < entry.policy.quotas().size(); q++) {
            state[to.size() + q] = at[from.size() + q];
        }
        return new Entry(policy, now, state);
    }

    /** The entry's state at {@code now}: each limit's debt decayed, each quota's count in the current period. */
    private static long[] stateAt(Entry entry, long now) {
        long elapsed = Math.max(0, now - entry.writtenMicros);
        long[] state = PolicyArithmetic.inPeriod(entry.policy, entry.state, entry.writtenMicros, now)
                .clone();
        for (int i = 0; i < entry.policy.limits().size(); i++) {
            state[i] = TokenBucket.debtAfter(
                    entry.state[i], elapsed, entry.policy.limits().get(i));
        }
        return state;
    }

    /** Forgotten: every limit full for its retention, and no quota counted anything this period. */
    private static boolean forgotten(Entry entry, long now) {
        List<Limit> limits = entry.policy.limits();
        long[] state = stateAt(entry, now);
        for (int i = limits.size(); i < state.length; i++) {
            if (state[i] != 0) {
                return false;
            }
        }
        return TokenBucket.forgotten(
                limits, Arrays.copyOf(entry.state, limits.size()), Math.max(0, now - entry.writtenMicros));
    }

    @Override
    public CompletableFuture<Boolean> exists(String address) {
        Entry entry = buckets.get(address);
        return CompletableFuture.completedFuture(entry != null && !forgotten(entry, clock.nowMicros()));
    }

    @Override
    public CompletableFuture<Void> delete(String address) {
        buckets.remove(address);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Propagation> announceChange(Policy policy, String key, boolean confirmed) {
        return CompletableFuture.completedFuture(Propagation.none());
    }

    @Override
    public StoreFailure classify(Throwable failure, String address) {
        return new StoreFailure(
                Degradation.Cause.ERROR_REPLY, "the map store failed for " + address + ": " + failure, true);
    }

    /** Settings for a guard that never degrades a decision of this store in a test: a budget of minutes. */
    static GuardSettings patient(TimeSource clock) {
        return new GuardSettings(
                Duration.ofMinutes(1),
                io.tollgate.FailurePolicy.DENY,
                java.util.Map.of(),
                1,
                5,
                Duration.ofSeconds(1),
                Duration.ofSeconds(30),
                0,
                Duration.ofSeconds(1),
                MetricsRecorder.NONE,
                clock,
                System.getLogger(MapBucketStore.class.getName()));
    }
}
