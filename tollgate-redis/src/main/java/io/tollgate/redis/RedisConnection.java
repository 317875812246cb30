package io.tollgate.redis;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * How a program connects the Redis store that its settings choose ({@code redis} section without {@code uri} or
 * {@code cluster-uris}) to a Redis of its own, such as a Lettuce client it already has: given to {@code
 * TollgateRuntime.open} in the store's context, and applied to the limiter's builder before the settings. A {@code
 * redis} section that names a Redis ignores it.
 *
 * <pre>{@code
 * StoreContext context = new StoreContext(null, List.of(new RedisConnection(
 *         "the application's Redis at cache:6379", builder -> builder.client(applicationClient))));
 * TollgateRuntime tollgate = TollgateRuntime.open(settings, context);
 * }</pre>
 *
 * @param description where it connects, for the limiter's line at startup and its messages ({@link
 *     RedisRateLimiter.Builder#describedAs})
 * @param connect sets the connection on the builder ({@link RedisRateLimiter.Builder#client}, {@link
 *     RedisRateLimiter.Builder#clusterClient}, ...)
 */
public record RedisConnection(String description, Consumer<RedisRateLimiter.Builder> connect) {

    /**
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if description is blank
     */
    public RedisConnection {
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(connect, "connect");
        if (description.isBlank()) {
            throw new IllegalArgumentException("description must not be blank");
        }
    }
}
