package io.tollgate.internal.top;

import java.util.Objects;

/**
 * The {@code top-keys} settings: whether decisions are counted by key, how reports show client keys, and how many
 * keys each summary holds.
 *
 * @param enabled whether every decision is counted by policy and key; on unless set (counting costs each decision
 *     an update of a summary, tens of nanoseconds: measured in docs/benchmarks.md)
 * @param show how keys are shown; masked unless set
 * @param capacity the keys each summary holds, 8 to 4096; 64 unless set
 */
public record TopKeysSettings(boolean enabled, KeyDisplay show, int capacity) {

    /** The settings when none is given. */
    public static final TopKeysSettings DEFAULTS =
            new TopKeysSettings(true, KeyDisplay.MASKED, HeavyHitters.DEFAULT_CAPACITY);

    /**
     * @throws IllegalArgumentException if capacity is out of range
     */
    public TopKeysSettings {
        Objects.requireNonNull(show, "show");
        if (capacity < 8 || capacity > 4096) {
            throw new IllegalArgumentException("capacity must be 8 to 4096, was " + capacity);
        }
    }
}
