package io.tollgate.spi;

import java.util.Optional;

/**
 * What a {@link StoreProvider} read from its section: checked, and able to open the store. Values: equal when
 * they open the same store the same way, which is how a reload tells that the store's settings changed.
 *
 * <p>Implementations are immutable and thread-safe.
 */
public interface StoreSettings {

    /** Returns the section that chose the store, such as {@code memory}. */
    String name();

    /** Returns the store as log lines and pages name it, such as {@code memory} or {@code redis at host:6379}. */
    String description();

    /**
     * Returns what the settings still need before the store can be opened with no help from the surface (such as
     * a Redis to connect to, where the starter may share the application's own), or empty.
     */
    default Optional<String> needs() {
        return Optional.empty();
    }

    /**
     * Opens the store: connects, loads what it needs, and returns a limiter on it, with what {@code context} adds
     * that the store knows (such as where the limiter reports).
     *
     * @throws IllegalArgumentException if a setting cannot be applied, naming it
     * @throws IllegalStateException if the store cannot be reached and the settings require it at the start
     */
    OpenedStore open(StoreContext context);
}
