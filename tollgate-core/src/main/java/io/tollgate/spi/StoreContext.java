package io.tollgate.spi;

import io.tollgate.TimeSource;
import java.util.List;
import java.util.Objects;

/**
 * What the surface that opens a store gives it: the clock of tests, and what the surface adds, each of a type
 * that the providers that use it know: where the limiter reports (the server's and the starter's meters), or the
 * surface's own means of connecting (the starter's share of the application's Redis client). A provider takes
 * what it knows and leaves the rest.
 *
 * @param clientClock the clock the limiter reads instead of the store's own, for deterministic tests; null for the
 *     store's own
 * @param extensions what the surface adds, looked up by type ({@link #extensions(Class)})
 */
public record StoreContext(TimeSource clientClock, List<Object> extensions) {

    /** A context on the store's own clock, with nothing added. */
    public static final StoreContext PLAIN = new StoreContext(null, List.of());

    /**
     * @throws NullPointerException if extensions, or one of them, is null
     */
    public StoreContext {
        extensions = List.copyOf(Objects.requireNonNull(extensions, "extensions"));
    }

    /** Returns the extensions of {@code type}, in the order the surface gave them; none when it gave none. */
    public <T> List<T> extensions(Class<T> type) {
        Objects.requireNonNull(type, "type");
        return extensions.stream().filter(type::isInstance).map(type::cast).toList();
    }
}
