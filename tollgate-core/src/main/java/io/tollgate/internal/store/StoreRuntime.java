package io.tollgate.internal.store;

import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.internal.top.TopKeys;
import io.tollgate.internal.top.TopKeysSettings;
import io.tollgate.spi.OpenedStore;
import io.tollgate.spi.StoreContext;
import io.tollgate.spi.StoreSettings;
import java.lang.System.Logger.Level;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What lies beneath every surface (the server, the starter): the store the configuration chooses, opened, its
 * limiter reporting to the surface's recorder, the count of who is limited shared with the other instances, and the
 * order they close in (the counts first, while the store's connection can still withdraw them; the store last).
 * The surfaces adapt it; none of them names a store.
 *
 * <p>Thread-safe.
 */
public final class StoreRuntime implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("io.tollgate");

    private final StoreSettings settings;
    private final OpenedStore store;
    /** Who the instances limit; null unless counted. */
    private final TopKeys topKeys;

    private final AtomicBoolean closed = new AtomicBoolean();

    private StoreRuntime(StoreSettings settings, OpenedStore store, TopKeys topKeys) {
        this.settings = settings;
        this.store = store;
        this.topKeys = topKeys;
    }

    /**
     * Opens the store {@code settings} read and, as {@code topKeys} says, counts who it limits.
     *
     * @throws io.tollgate.config.ConfigException if a setting cannot be applied, naming it
     * @throws IllegalStateException if the store cannot be reached and its settings require it at the start
     */
    public static StoreRuntime open(StoreSettings settings, StoreContext context, TopKeysSettings topKeys) {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(topKeys, "topKeys");
        OpenedStore store = settings.open(context);
        try {
            TopKeys counted = topKeys.enabled()
                    ? TopKeys.count(
                            store.limiter(),
                            context.clientClock() == null ? TimeSource.system() : context.clientClock(),
                            topKeys.capacity(),
                            store::shareSummaries)
                    : null;
            return new StoreRuntime(settings, store, counted);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    /** Returns the limiter on the store. Closed by {@link #close()}, not by its users. */
    public RateLimiter limiter() {
        return store.limiter();
    }

    /** Returns the store, to ask whether it answers. */
    public OpenedStore store() {
        return store;
    }

    /** Returns the settings the store was opened with. */
    public StoreSettings settings() {
        return settings;
    }

    /** Returns the store as log lines name it, such as {@code memory} or {@code redis at host:6379}. */
    public String description() {
        return settings.description();
    }

    /** Returns who the instances limit, or null when top keys are not counted. */
    public TopKeys topKeys() {
        return topKeys;
    }

    /**
     * Stops counting and withdraws this instance's counts, then closes the store. Safe to call more than once; a
     * failure to close is logged, not thrown.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            if (topKeys != null) {
                topKeys.close(); // withdraws this instance's summaries while the connection is still open
            }
        } finally {
            try {
                store.close();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "closing the store " + settings.description() + " failed", e);
            }
        }
    }

    @Override
    public String toString() {
        return "StoreRuntime[" + settings.description() + (topKeys == null ? "" : ", top keys") + "]";
    }
}
