package io.tollgate.spring;

import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.runtime.Stores;
import io.tollgate.runtime.TollgateRuntime;
import io.tollgate.spi.OpenedStore;
import io.tollgate.top.KeyDisplay;
import io.tollgate.top.TopKeys;
import io.tollgate.top.TopKeysSettings;
import java.util.Optional;

/**
 * Who the application is limiting ({@code tollgate.top-keys.*}): the counts of every decision its limiter takes
 * (the rules', {@code @RateLimit}'s and the application's own calls), shared with its other instances on Redis
 * ({@link TopKeys}), and how the Actuator shows the keys. Closed with the application context, before the limiter.
 *
 * @param top the counts; null when counting is off, or the limiter tells no listener
 * @param show how keys are shown
 * @param owned whether closing these counts closes {@code top}: not where the store's runtime owns them
 */
record KeyCounts(TopKeys top, KeyDisplay show, boolean owned) implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(KeyCounts.class.getName());

    /**
     * Returns the counts of {@code limiter}'s decisions as {@code settings} say. A limiter of the application's own
     * that tells no listener is not counted, and the log says so.
     */
    static KeyCounts of(RateLimiter limiter, TopKeysSettings settings) {
        if (!settings.enabled()) {
            return new KeyCounts(null, settings.show(), false);
        }
        // A limiter of a store Tollgate knows (one the application built itself) shares its counts, as the store's own
        // do
        Optional<OpenedStore> store = Stores.adopt(limiter);
        try {
            return new KeyCounts(
                    TopKeys.count(
                            limiter,
                            TimeSource.system(),
                            settings.capacity(),
                            summaries -> store.map(known -> known.shareSummaries(summaries))
                                    .orElse(null)),
                    settings.show(),
                    true);
        } catch (UnsupportedOperationException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "tollgate.top-keys: the application''s RateLimiter ({0}) tells no decision listener: who it limits"
                            + " is not counted",
                    limiter);
            return new KeyCounts(null, settings.show(), false);
        }
    }

    /** Returns the counts that {@code store} keeps (null when it counts none), shown as {@code settings} say. */
    static KeyCounts of(TollgateRuntime store, TopKeysSettings settings) {
        return new KeyCounts(store.topKeys().orElse(null), settings.show(), false);
    }

    /** Stops counting, stops publishing this instance's counts, and withdraws them. */
    @Override
    public void close() {
        if (top != null && owned) {
            top.close();
        }
    }
}
