package io.tollgate.spi;

import io.tollgate.RateLimiter;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import java.util.Optional;

/**
 * A store that buckets may live in, found by {@link java.util.ServiceLoader} ({@code META-INF/services}, or a
 * module's {@code provides}). The configuration chooses it by holding its section ({@link #section()}): {@code
 * memory}, {@code redis}. A provider reads only its own section; opening the store it read is {@link
 * StoreSettings#open}'s.
 *
 * <p>Implementations are stateless and thread-safe, with a public constructor that takes no arguments.
 */
public interface StoreProvider {

    /** Returns the name of the section that chooses this store and holds its settings, such as {@code redis}. */
    default String section() {
        return schema().name();
    }

    /** Returns the keys the store's section may hold, named by {@link #section()}. */
    ConfigSection schema();

    /**
     * Reads and checks the store's section, without opening anything: a file is checked in full before anything
     * starts. An absent section gives the defaults.
     *
     * @throws io.tollgate.config.ConfigException if a setting is invalid or unknown, naming it
     */
    StoreSettings read(ConfigNode section);

    /**
     * Returns a view of {@code limiter} as this store, if it is one of this provider's limiters (such as one an
     * application built itself), that does not close it; empty otherwise.
     */
    default Optional<OpenedStore> adopt(RateLimiter limiter) {
        return Optional.empty();
    }
}
