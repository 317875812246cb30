package io.tollgate.spring;

import io.tollgate.redis.RedisRateLimiter;

/**
 * Adjusts the {@link RedisRateLimiter} that the starter builds, before it is built: declare one as a bean to
 * set, say, per-policy failure policies. Customizers run in their order, after the {@code tollgate.redis.*}
 * properties are applied.
 */
@FunctionalInterface
public interface TollgateRedisCustomizer {

    /** Adjusts the builder. */
    void customize(RedisRateLimiter.Builder builder);
}
