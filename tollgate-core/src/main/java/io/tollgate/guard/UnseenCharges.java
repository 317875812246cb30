package io.tollgate.guard;

import io.tollgate.Policy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Requests that the {@code LOCAL} failure policy admitted while the store could not be asked (the circuit
 * breaker was open, or there was no connection), so that the store never saw them: their costs, summed per key,
 * are charged to the store once it answers again, and every admission remembered is charged there in the end.
 * Requests that reached the store need no such note: the store's own answer, in time or late, accounts for them.
 *
 * <p><b>Never ahead of a decision.</b> The charges are sent only once the store has answered a decision
 * ({@link #drain}), never before one: the call that tells whether the store is back (the circuit breaker's
 * probe) never waits behind them. They go {@link #WINDOW} at a time, each window once the one before has been
 * answered, so that at most a window of charges is ever on its way beside the live decisions: a bounded share
 * of the store's time, however many keys were admitted meanwhile.
 *
 * <p><b>Bounded.</b> At most {@code maximumKeys} keys are remembered; an admission for a further key while it
 * is full is not charged later, and is counted ({@link #dropped}) and reported. Thread-safe.
 */
final class UnseenCharges {

    /** The most charges on their way to the store at once. */
    static final int WINDOW = 128;

    private record Key(Policy policy, String key) {}

    /** Where the noted charges go: one call per key, with the sum of its costs. */
    interface Charger {
        /**
         * Charges {@code cost} to the key; the stage completes when the store took it, or exceptionally when it
         * could not be asked, after noting the charge again where it should be tried again.
         */
        CompletableFuture<?> charge(String key, Policy policy, long cost);
    }

    private final long maximumKeys;
    private final Map<Key, Long> costs = new ConcurrentHashMap<>();
    private final AtomicBoolean draining = new AtomicBoolean();
    private final AtomicLong charged = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();

    UnseenCharges(long maximumKeys) {
        this.maximumKeys = maximumKeys;
    }

    /**
     * Notes a request of {@code cost} that was admitted without the store; returns false if it could not be
     * remembered (as many keys as allowed are waiting already), and counts it.
     */
    boolean add(Policy policy, String key, long cost) {
        Key noted = new Key(policy, key);
        if (costs.size() < maximumKeys || costs.containsKey(noted)) {
            costs.merge(noted, cost, Long::sum);
            return true;
        }
        dropped.incrementAndGet();
        return false;
    }

    /**
     * Sends the noted charges to {@code charger}, a window at a time, each after the one before was answered,
     * until none is left; returns at once. Does nothing if none is noted or another drain is running, and stops
     * when a charge fails (the store is gone again: the next answer from it drains again). Cheap when there is
     * nothing to do, as it is called after every answer from the store.
     */
    void drain(Charger charger) {
        if (costs.isEmpty() || !draining.compareAndSet(false, true)) {
            return;
        }
        // Taken out first, charged after: a charge that fails at once notes its cost again, which the walk over
        // the map could meet again in the same window.
        Map<Key, Long> taken = new HashMap<>();
        Iterator<Key> noted = costs.keySet().iterator();
        while (taken.size() < WINDOW && noted.hasNext()) {
            Key next = noted.next();
            Long cost = costs.remove(next);
            if (cost != null) {
                taken.put(next, cost);
            }
        }
        List<CompletableFuture<?>> window = new ArrayList<>(taken.size());
        taken.forEach((key, cost) -> window.add(charge(charger, key, cost)));
        CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).whenComplete((done, failure) -> {
            draining.set(false);
            if (failure == null) {
                drain(charger);
            }
        });
    }

    private CompletableFuture<?> charge(Charger charger, Key noted, long cost) {
        CompletableFuture<?> sent;
        try {
            sent = charger.charge(noted.key(), noted.policy(), cost);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return sent.whenComplete((took, failure) -> {
            if (failure == null) {
                charged.incrementAndGet();
            }
        });
    }

    /** Returns how many keys have charges waiting. */
    int waiting() {
        return costs.size();
    }

    /** Returns how many remembered charges (one per key and outage) the store has taken. */
    long charged() {
        return charged.get();
    }

    /** Returns how many admissions were not remembered, for want of room. */
    long dropped() {
        return dropped.get();
    }
}
