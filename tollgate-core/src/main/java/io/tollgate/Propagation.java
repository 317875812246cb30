package io.tollgate;

import java.util.List;
import java.util.Objects;

/**
 * How far a change made outside a request, such as a {@linkplain RateLimiter#reset reset}, reached the other
 * instances that share the store: those that confirmed they forgot what they remembered of the key (a refusal
 * in their deny cache, their fallback's copy of its bucket), and those that did not confirm in time.
 *
 * <p>The store itself has the change either way: an instance that did not confirm refuses the key from its deny
 * cache at most until the cache's ceiling, and forgets every refusal when it hears the store again after losing
 * it. Instances are named by the ids they announce to the store (on Redis: host, process id and a random
 * suffix, as in {@code ZRANGE tollgate:instances/live 0 -1}).
 *
 * <p>Immutable and thread-safe.
 *
 * @param confirmed the other instances that confirmed, in the order they did
 * @param unconfirmed the other instances that were live when the change was announced and did not confirm in
 *     time, sorted
 */
public record Propagation(List<String> confirmed, List<String> unconfirmed) {

    private static final Propagation NONE = new Propagation(List.of(), List.of());

    /**
     * Copies both lists.
     *
     * @throws NullPointerException if a list or an element is null
     */
    public Propagation {
        confirmed = List.copyOf(Objects.requireNonNull(confirmed, "confirmed"));
        unconfirmed = List.copyOf(Objects.requireNonNull(unconfirmed, "unconfirmed"));
    }

    /** Returns the propagation of a change that no other instance needed to hear: a limiter in memory, or alone. */
    public static Propagation none() {
        return NONE;
    }

    /** Returns whether every other live instance confirmed: the change is in force wherever a request lands. */
    public boolean complete() {
        return unconfirmed.isEmpty();
    }
}
