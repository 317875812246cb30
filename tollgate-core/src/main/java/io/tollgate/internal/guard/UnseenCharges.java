package io.tollgate.internal.guard;

import io.tollgate.Policy;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Requests that the {@code LOCAL} failure policy admitted while the store could not be asked (the circuit
 * breaker was open, or there was no connection), so that the store never saw them: their costs, summed per key,
 * are charged to the store once it answers again, and every admission is charged there in the end. Requests
 * that reached the store need no such note: the store's own answer, in time or late, accounts for them.
 *
 * <p>Bounded: at most {@code maximumKeys} keys are noted; admissions for further keys while it is full are
 * not charged later. Thread-safe.
 */
final class UnseenCharges {

    private record Key(Policy policy, String key) {}

    /** Where the noted charges go: one call per key, with the sum of its costs. */
    interface Charger {
        void charge(String key, Policy policy, long cost);
    }

    private final long maximumKeys;
    private final Map<Key, Long> costs = new ConcurrentHashMap<>();
    private final AtomicBoolean flushing = new AtomicBoolean();

    UnseenCharges(long maximumKeys) {
        this.maximumKeys = maximumKeys;
    }

    /** Notes a request of {@code cost} that was admitted without the store. */
    void add(Policy policy, String key, long cost) {
        Key noted = new Key(policy, key);
        if (costs.size() < maximumKeys || costs.containsKey(noted)) {
            costs.merge(noted, cost, Long::sum);
        }
    }

    /**
     * Hands every noted charge to {@code charger} and forgets it, unless there is none or another thread is
     * doing so. Called before every call to the store, so that the charges go ahead of the calls of this thread;
     * cheap when there is nothing to do.
     */
    void flush(Charger charger) {
        if (costs.isEmpty() || !flushing.compareAndSet(false, true)) {
            return;
        }
        try {
            // Taken out first, charged after: a charge that fails at once notes its cost again, which the
            // loop over the map would meet again, for ever while the store cannot be reached.
            Map<Key, Long> taken = new HashMap<>();
            for (Key noted : costs.keySet()) {
                Long cost = costs.remove(noted);
                if (cost != null) {
                    taken.put(noted, cost);
                }
            }
            taken.forEach((noted, cost) -> charger.charge(noted.key(), noted.policy(), cost));
        } finally {
            flushing.set(false);
        }
    }
}
