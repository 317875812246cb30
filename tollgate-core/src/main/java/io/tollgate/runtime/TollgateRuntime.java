package io.tollgate.runtime;

import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.config.ConfigNode;
import io.tollgate.spi.OpenedStore;
import io.tollgate.spi.StoreContext;
import io.tollgate.spi.StoreSettings;
import io.tollgate.top.TopKeys;
import io.tollgate.top.TopKeysSettings;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The store a configuration chooses, opened, with what lies beneath every surface (the server, the starter, a
 * program of one's own): the limiter on the store, the meters and the count of who is limited that the surface
 * asks for, shared with the other instances through the store, and the order they close in: the counts first, while
 * the store's connection can still withdraw them, then the store. The surfaces adapt it; none of them names a store.
 *
 * <pre>{@code
 * ConfigNode file = ConfigNode.of(Map.of("redis", Map.of("uri", "redis://127.0.0.1:6379")));
 * try (TollgateRuntime tollgate = TollgateRuntime.open(file)) {
 *     Decision decision = tollgate.limiter().tryAcquire("alice", perClient);
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class TollgateRuntime implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("io.tollgate");

    private final StoreSettings settings;
    private final OpenedStore store;
    /** Who the instances limit; null unless counted. */
    private final TopKeys topKeys;

    private final AtomicBoolean closed = new AtomicBoolean();

    private TollgateRuntime(StoreSettings settings, OpenedStore store, TopKeys topKeys) {
        this.settings = settings;
        this.store = store;
        this.topKeys = topKeys;
    }

    /**
     * Opens the store that {@code configuration} chooses by its section ({@code memory}, the default, {@code redis},
     * or a provider's own), on the store's own clock.
     *
     * @throws io.tollgate.config.ConfigException if the configuration names two stores, an unknown one, or a bad
     *     setting, naming it
     * @throws IllegalStateException if the store cannot be reached and its settings require it at the start
     */
    public static TollgateRuntime open(ConfigNode configuration) {
        return open(configuration, StoreContext.PLAIN);
    }

    /**
     * Opens the store that {@code configuration} chooses by its section, with what {@code context} adds; a {@code
     * top-keys} section, where the configuration holds one, says how who is limited is counted.
     *
     * @throws io.tollgate.config.ConfigException if the configuration names two stores, an unknown one, or a bad
     *     setting, naming it
     * @throws IllegalStateException if the store cannot be reached and its settings require it at the start
     */
    public static TollgateRuntime open(ConfigNode configuration, StoreContext context) {
        Objects.requireNonNull(configuration, "configuration");
        Objects.requireNonNull(context, "context");
        StoreSettings store = Stores.read(configuration);
        store.needs().ifPresent(needed -> {
            throw configuration.child(store.name()).error(needed);
        });
        ConfigNode topKeys = configuration.child(TopKeysSettings.SCHEMA.name());
        if (!topKeys.isPresent()) {
            return open(store, context);
        }
        List<Object> extensions = new ArrayList<>(context.extensions());
        extensions.add(TopKeysSettings.read(topKeys));
        return open(store, new StoreContext(context.clientClock(), extensions));
    }

    /**
     * Opens the store that {@code settings} describe (as its provider read them), with what {@code context} adds.
     * Who is limited is counted where the context carries the settings of top keys, as Tollgate's surfaces give them.
     *
     * @throws IllegalArgumentException if a setting cannot be applied, naming it
     * @throws IllegalStateException if the store cannot be reached and its settings require it at the start
     */
    public static TollgateRuntime open(StoreSettings settings, StoreContext context) {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(context, "context");
        OpenedStore store = settings.open(context);
        try {
            TopKeysSettings counting = context.extensions(TopKeysSettings.class).stream()
                    .reduce((first, later) -> later)
                    .orElse(null);
            TopKeys counted = counting != null && counting.enabled()
                    ? TopKeys.count(
                            store.limiter(),
                            context.clientClock() == null ? TimeSource.system() : context.clientClock(),
                            counting.capacity(),
                            store::shareSummaries)
                    : null;
            return new TollgateRuntime(settings, store, counted);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    /** Returns the limiter on the store. Closed by {@link #close()}, not by its users. */
    public RateLimiter limiter() {
        return store.limiter();
    }

    /** Returns the store: whether it answers, what a health check shows of it. */
    public OpenedStore store() {
        return store;
    }

    /** Returns the settings the store was opened with. */
    public StoreSettings settings() {
        return settings;
    }

    /** Returns the store as log lines name it, such as {@code memory} or {@code redis at redis://host:6379}. */
    public String description() {
        return settings.description();
    }

    /**
     * Returns who the instances sharing the store limit, where the runtime counts it (its context carries the settings
     * of top keys, or its configuration a {@code top-keys} section, with counting on); empty otherwise.
     */
    public Optional<TopKeys> topKeys() {
        return Optional.ofNullable(topKeys);
    }

    /**
     * Stops counting and withdraws this instance's counts, then closes the store. Safe to call more than once; a
     * failure to close the store is logged, not thrown.
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
        return "TollgateRuntime[" + settings.description() + (topKeys == null ? "" : ", top keys") + "]";
    }
}
