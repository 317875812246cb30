package io.tollgate.redis.internal.store;

import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.redis.internal.RedisSettings;

/**
 * Puts the {@code redis} settings onto a {@link RedisRateLimiter.Builder}: the one mapping that the server
 * and the Spring Boot starter share. Stateless.
 */
public final class RedisSettingsMapping {

    private RedisSettingsMapping() {}

    /**
     * Sets on {@code builder} where Redis is (when the settings say) and every other setting.
     *
     * @return the builder
     * @throws IllegalArgumentException if the builder refuses a value, naming it
     */
    public static RedisRateLimiter.Builder configure(RedisRateLimiter.Builder builder, RedisSettings settings) {
        if (settings.uri() != null) {
            builder.uri(settings.uri());
        } else if (!settings.clusterUris().isEmpty()) {
            builder.clusterUris(settings.clusterUris());
        }
        builder.timeout(settings.timeout())
                .keyPrefix(settings.keyPrefix())
                .failurePolicy(settings.failurePolicy())
                .batching(settings.batching())
                .denyCacheMaxAge(settings.denyCacheMaxAge())
                .leases(settings.leases().toArray(String[]::new))
                .requireRedisAtStart(settings.requireRedisAtStart());
        if (settings.password() != null) {
            builder.credentials(settings.username(), settings.password());
        } else if (settings.username() != null) {
            throw new IllegalArgumentException("redis.username needs redis.password");
        }
        if (settings.expectedInstances() > 0) {
            builder.expectedInstances(settings.expectedInstances());
        }
        return builder;
    }
}
