package io.tollgate.config;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The schema of one section of the settings: the keys it may hold, and for those whose values are sections in turn
 * (one, a list of them, or a map of them by name), the schema of those. Every surface checks a file's keys against
 * these, and the Spring Boot starter reads its {@code tollgate.*} properties by them, so that a setting is named in
 * one place. Immutable.
 *
 * @param name what the section is, for messages (such as {@code rule})
 * @param keys the keys it may hold
 * @param sections for each key whose values are sections, their schema
 */
public record ConfigSection(String name, Set<String> keys, Map<String, ConfigSection> sections) {

    /**
     * @throws IllegalArgumentException if a key of {@code sections} is not one of {@code keys}
     */
    public ConfigSection {
        Objects.requireNonNull(name, "name");
        keys = Set.copyOf(keys);
        sections = Map.copyOf(sections);
        for (String key : sections.keySet()) {
            if (!keys.contains(key)) {
                throw new IllegalArgumentException(name + ": section '" + key + "' is not one of its keys " + keys);
            }
        }
    }

    /** Returns a section of plain values under {@code keys}. */
    public static ConfigSection of(String name, String... keys) {
        return new ConfigSection(name, Set.of(keys), Map.of());
    }

    /** Returns this section with {@code key} holding values of {@code section} (one, a list or a map of them). */
    public ConfigSection with(String key, ConfigSection section) {
        Set<String> withKey = new TreeSet<>(keys);
        withKey.add(key);
        Map<String, ConfigSection> withSection = new HashMap<>(sections);
        withSection.put(key, section);
        return new ConfigSection(name, withKey, withSection);
    }

    /** Returns the schema of the values of {@code key}, or null if they are plain values. */
    public ConfigSection section(String key) {
        return sections.get(key);
    }
}
