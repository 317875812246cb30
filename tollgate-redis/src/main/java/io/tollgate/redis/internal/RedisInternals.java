package io.tollgate.redis.internal;

import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.spi.SummaryExchange;
import java.util.function.Supplier;

/**
 * What {@code io.tollgate.redis} lends Tollgate's own modules of a {@link RedisRateLimiter} beyond its API: its
 * connection, for {@link SummaryExchange}. {@link RedisRateLimiter} grants it when its class is initialized,
 * once (as the JDK's {@code SharedSecrets} do); this package is exported to Tollgate's modules only.
 */
public final class RedisInternals {

    /** What the limiter's package grants. */
    public interface Access {

        /** See {@link RedisInternals#shareSummaries}. */
        SummaryExchange shareSummaries(RedisRateLimiter limiter, Supplier<byte[]> summaries);
    }

    private static volatile Access access;

    private RedisInternals() {}

    /**
     * Called once, by {@link RedisRateLimiter}'s class initializer.
     *
     * @throws IllegalStateException if access was granted before
     */
    public static synchronized void grant(Access granted) {
        if (access != null) {
            throw new IllegalStateException("access to RedisRateLimiter was granted already");
        }
        access = granted;
    }

    /**
     * Starts publishing {@code summaries} (asked for each time) through {@code limiter}'s connection, at once and
     * then every few seconds, until the exchange is closed; close it before the limiter.
     */
    public static SummaryExchange shareSummaries(RedisRateLimiter limiter, Supplier<byte[]> summaries) {
        // The limiter exists, so its class initializer has run and granted access
        return access.shareSummaries(limiter, summaries);
    }
}
