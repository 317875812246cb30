package io.tollgate.redis;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * A change a program makes to the limiter of the Redis store that its settings choose, once the settings are applied
 * and just before the limiter is built, such as metrics of its own or a failure policy per policy: given to {@code
 * TollgateRuntime.open} in the store's context, in the order given. The starter's {@code TollgateRedisCustomizer}
 * beans travel this way.
 *
 * @param customize changes the builder
 */
public record RedisCustomization(Consumer<RedisRateLimiter.Builder> customize) {

    /** @throws NullPointerException if customize is null */
    public RedisCustomization {
        Objects.requireNonNull(customize, "customize");
    }
}
