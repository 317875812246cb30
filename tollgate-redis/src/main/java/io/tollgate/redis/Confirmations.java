package io.tollgate.redis;

import io.tollgate.Propagation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The confirmations that one announced reset waits for ({@link BucketChanges}): complete once every instance that
 * was live at the announcement confirmed it, or given up, naming those that did not. Confirmations may arrive
 * before Redis has named the live instances. Thread-safe.
 */
final class Confirmations {

    final CompletableFuture<Propagation> done = new CompletableFuture<>();
    private final List<String> heard = new ArrayList<>();
    private Set<String> expected; // null until Redis named the live instances

    void heard(String instance) {
        Propagation complete;
        synchronized (this) {
            if (!heard.contains(instance)) {
                heard.add(instance);
            }
            complete = completeIfAllHeard();
        }
        finish(complete);
    }

    void expect(Set<String> instances) {
        Propagation complete;
        synchronized (this) {
            expected = instances;
            complete = completeIfAllHeard();
        }
        finish(complete);
    }

    void giveUp() {
        Propagation partial;
        synchronized (this) {
            Set<String> missing = new HashSet<>(expected == null ? Set.of() : expected);
            heard.forEach(missing::remove);
            partial = new Propagation(heard, sorted(missing));
        }
        finish(partial); // outside the lock: what waits for it runs now
    }

    private Propagation completeIfAllHeard() {
        return expected != null && heard.containsAll(expected) ? new Propagation(heard, List.of()) : null;
    }

    private void finish(Propagation propagation) {
        if (propagation != null) {
            done.complete(propagation);
        }
    }

    /** The instances, sorted, as a {@link Propagation} names them. */
    static List<String> sorted(Set<String> instances) {
        return instances.stream().sorted().toList();
    }
}
