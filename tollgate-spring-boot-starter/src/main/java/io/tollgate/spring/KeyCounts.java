package io.tollgate.spring;

import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.internal.top.KeyDisplay;
import io.tollgate.internal.top.TopKeysSettings;
import io.tollgate.redis.internal.TopKeys;

/**
 * Who the application is limiting ({@code tollgate.top-keys.*}): the counts of every decision its limiter takes
 * (the rules', {@code @RateLimit}'s and the application's own calls), shared with its other instances on Redis
 * ({@link TopKeys}), and how the Actuator shows the keys. Closed with the application context, before the limiter.
 *
 * @param top the counts; null when counting is off, or the limiter tells no listener
 * @param show how keys are shown
 */
record KeyCounts(TopKeys top, KeyDisplay show) implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(KeyCounts.class.getName());

    /**
     * Returns the counts of {@code limiter}'s decisions as {@code settings} say. A limiter of the application's own
     * that tells no listener is not counted, and the log says so.
     */
    static KeyCounts of(RateLimiter limiter, TopKeysSettings settings) {
        if (!settings.enabled()) {
            return new KeyCounts(null, settings.show());
        }
        try {
            return new KeyCounts(TopKeys.count(limiter, TimeSource.system(), settings.capacity()), settings.show());
        } catch (UnsupportedOperationException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "tollgate.top-keys: the application''s RateLimiter ({0}) tells no decision listener: who it limits"
                            + " is not counted",
                    limiter);
            return new KeyCounts(null, settings.show());
        }
    }

    /** Stops counting, stops publishing this instance's counts, and withdraws them. */
    @Override
    public void close() {
        if (top != null) {
            top.close();
        }
    }
}
