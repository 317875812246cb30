package io.tollgate.redis.internal.store;

import io.tollgate.RateLimiter;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import io.tollgate.redis.MicrometerMetrics;
import io.tollgate.redis.RedisConnection;
import io.tollgate.redis.RedisCustomization;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.redis.internal.RedisSettings;
import io.tollgate.spi.OpenedStore;
import io.tollgate.spi.StoreContext;
import io.tollgate.spi.StoreProvider;
import io.tollgate.spi.StoreSettings;
import io.tollgate.spi.SummaryExchange;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Buckets in Redis ({@link RedisRateLimiter}): chosen by a {@code redis} section ({@link RedisSettings}). A surface
 * that connects to Redis its own way (the starter sharing the application's client) adds a {@link RedisConnection}
 * to the store's context, and one that lets the application adjust the limiter a {@link RedisCustomization}.
 * Stateless.
 */
public final class RedisStoreProvider implements StoreProvider {

    /** Creates the provider; {@link java.util.ServiceLoader} does. */
    public RedisStoreProvider() {}

    @Override
    public ConfigSection schema() {
        return RedisSettings.SECTION;
    }

    @Override
    public Settings read(ConfigNode section) {
        return new Settings(RedisSettings.read(section));
    }

    @Override
    public Optional<OpenedStore> adopt(RateLimiter limiter) {
        return limiter instanceof RedisRateLimiter redis ? Optional.of(new Opened(redis, false)) : Optional.empty();
    }

    /**
     * The {@code redis} section, read.
     *
     * @param redis the settings
     */
    public record Settings(RedisSettings redis) implements StoreSettings {

        public Settings {
            Objects.requireNonNull(redis, "redis");
        }

        @Override
        public String name() {
            return RedisSettings.SECTION.name();
        }

        @Override
        public String description() {
            return redis.hasTarget() ? "redis at " + redis.target() : "redis";
        }

        @Override
        public Optional<String> needs() {
            return redis.hasTarget()
                    ? Optional.empty()
                    : Optional.of(
                            "needs uri (one server, Sentinel or TLS) or cluster-uris (the seed nodes of a cluster)");
        }

        /**
         * Builds the limiter: the surface's {@link RedisConnection} (where the settings name no Redis), the settings,
         * the context's recorder and clock, then the surface's {@link RedisCustomization}s.
         *
         * @throws IllegalArgumentException if the builder refuses a setting, naming it
         * @throws IllegalStateException if Redis cannot be reached and the settings require it at the start
         */
        @Override
        public OpenedStore open(StoreContext context) {
            RedisRateLimiter.Builder builder = RedisRateLimiter.builder();
            if (!redis.hasTarget()) {
                context.extensions(RedisConnection.class).forEach(connection -> {
                    builder.describedAs(connection.description());
                    connection.connect().accept(builder);
                });
            }
            RedisSettingsMapping.configure(builder, redis);
            context.extensions(MicrometerMetrics.class).forEach(builder::metrics); // it records its decisions too
            if (context.clientClock() != null) {
                builder.clientClock(context.clientClock());
            }
            context.extensions(RedisCustomization.class)
                    .forEach(step -> step.customize().accept(builder));
            return new Opened(builder.build(), true);
        }
    }

    /** A Redis limiter as a store: closed with it only when the store opened it. */
    private record Opened(RedisRateLimiter limiter, boolean owned) implements OpenedStore {

        @Override
        public String name() {
            return RedisSettings.SECTION.name();
        }

        @Override
        public CompletionStage<Optional<String>> ping() {
            return limiter.ping();
        }

        @Override
        public CompletionStage<Optional<String>> ping(Duration patience) {
            return limiter.ping(patience);
        }

        @Override
        public Map<String, String> details() {
            Map<String, String> details = new LinkedHashMap<>();
            details.put("limiter", limiter.toString());
            details.put("circuit", limiter.circuitState());
            return details;
        }

        @Override
        public boolean inProcess() {
            return false;
        }

        @Override
        public SummaryExchange shareSummaries(Supplier<byte[]> summaries) {
            return limiter.shareSummaries(summaries);
        }

        @Override
        public void close() {
            if (owned) {
                limiter.close();
            }
        }
    }
}
