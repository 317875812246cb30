package io.tollgate.top;

import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
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

    /** The {@code top-keys} section's keys. */
    public static final ConfigSection SCHEMA = ConfigSection.of("top-keys", "enabled", "show", "capacity");

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

    /**
     * Reads the {@code top-keys} section: {@code enabled}, {@code show} ({@code whole}, {@code masked} or {@code
     * digest}) and {@code capacity} (8 to 4096); an absent node gives the defaults.
     *
     * @throws ConfigException if a setting is invalid, naming it
     */
    public static TopKeysSettings read(ConfigNode node) {
        node.checkKeys(SCHEMA);
        ConfigNode show = node.child("show");
        KeyDisplay display;
        try {
            display = show.isPresent() ? KeyDisplay.of(show.requiredString()) : DEFAULTS.show();
        } catch (IllegalArgumentException e) {
            throw show.error(e.getMessage());
        }
        ConfigNode capacity = node.child("capacity");
        long keys = capacity.longValue(DEFAULTS.capacity());
        if (keys < 8 || keys > 4096) {
            throw capacity.error("must be 8 to 4096, was " + keys);
        }
        return new TopKeysSettings(node.child("enabled").bool(DEFAULTS.enabled()), display, (int) keys);
    }
}
