package io.tollgate;

import java.util.Locale;

/**
 * How much a request matters when the service behind Tollgate is overloaded, as Google's SRE practice names request
 * criticality: as the service's limit on requests in flight fills, {@link #SHEDDABLE} requests are refused first,
 * {@link #CRITICAL} ones last (docs/load-shedding.md). A rule, or the policy a client's plan chooses, gives its
 * requests a priority; {@link #DEFAULT} where none does.
 */
public enum Priority {
    /** Served while anything is served: the reserve of the limit is kept for them. */
    CRITICAL,
    /** Most requests. */
    DEFAULT,
    /** Refused first as the limit fills: background, free tier, retries. */
    SHEDDABLE;

    /**
     * Reads {@code critical}, {@code default} or {@code sheddable}.
     *
     * @throws IllegalArgumentException naming the value and the known ones, for anything else
     */
    public static Priority of(String text) {
        for (Priority priority : values()) {
            if (priority.text().equals(text)) {
                return priority;
            }
        }
        throw new IllegalArgumentException("priority must be critical, default or sheddable, was '" + text + "'");
    }

    /** Returns the name as configurations write it: {@code critical}, {@code default} or {@code sheddable}. */
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
