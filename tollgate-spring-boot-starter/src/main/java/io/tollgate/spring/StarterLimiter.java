package io.tollgate.spring;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.RateLimiter;
import io.tollgate.internal.guard.MetricsRecorder;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.redis.internal.RedisSettings;
import io.tollgate.redis.internal.RedisSettingsMapping;
import java.lang.System.Logger.Level;
import java.util.function.Consumer;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The starter's limiter, on the store its settings and the application give: Redis of Tollgate's own ({@code
 * tollgate.redis.uri} or {@code cluster-uris}), else the application's Redis (its Lettuce client shared, or a
 * Lettuce client of Tollgate's own made from {@code spring.data.redis.*} when the application is on another
 * client), else memory. {@code tollgate.store} states the store: {@code redis} fails the start where no Redis can
 * be used, {@code memory} keeps the buckets in memory whatever Redis there is. Stateless.
 */
final class StarterLimiter {

    private static final System.Logger LOG = System.getLogger("io.tollgate.spring");

    private StarterLimiter() {}

    /**
     * Builds the limiter.
     *
     * @throws InvalidTollgatePropertiesException if a setting is invalid, or {@code tollgate.store} is {@code redis}
     *     and no Redis can be used, saying how to give one
     */
    static RateLimiter build(
            TollgateProperties properties,
            ObjectProvider<ApplicationRedisConfiguration.ApplicationRedisClient> applicationRedis,
            ObjectProvider<ApplicationRedisConfiguration.ApplicationRedisSettings> applicationRedisSettings,
            ObjectProvider<TollgateRedisCustomizer> customizers,
            MetricsRecorder recorder) {
        RedisSettings redis = PropertiesReader.redis(properties);
        if (properties.store() == TollgateProperties.Store.MEMORY) {
            if (redis.hasTarget()) {
                throw new InvalidTollgatePropertiesException(
                        "tollgate.store is memory, but tollgate.redis names a Redis: remove one of them", null);
            }
            return inMemory(properties, recorder);
        }
        if (redis.hasTarget()) {
            return redis(redis, customizers, builder -> {}); // the settings say where
        }
        boolean useApplication = properties.redis().useApplicationRedis();
        ApplicationRedisConfiguration.ApplicationRedisClient shared =
                useApplication ? applicationRedis.getIfAvailable() : null;
        if (shared != null) {
            AbstractRedisClient client = shared.client().get();
            return redis(redis, customizers, builder -> {
                builder.describedAs(shared.description().get());
                if (client instanceof RedisClusterClient cluster) {
                    builder.clusterClient(cluster);
                } else if (client instanceof RedisClient standalone) {
                    builder.client(standalone);
                } else {
                    throw new InvalidTollgatePropertiesException(
                            "the application's Redis connection factory has no Lettuce client Tollgate can share ("
                                    + client + "); set tollgate.redis.uri",
                            null);
                }
            });
        }
        ApplicationRedisConfiguration.ApplicationRedisSettings settings =
                useApplication ? applicationRedisSettings.getIfAvailable() : null;
        if (settings != null) {
            return redis(
                    redis,
                    customizers,
                    builder -> settings.connection().accept(builder.describedAs(settings.description())));
        }
        if (properties.store() == TollgateProperties.Store.REDIS) {
            throw new InvalidTollgatePropertiesException(
                    "tollgate.store is redis, but there is no Redis to use: set tollgate.redis.uri (or cluster-uris),"
                            + " or give the application spring.data.redis.* (with spring-boot-starter-data-redis)"
                            + (useApplication ? "" : " and leave tollgate.redis.use-application-redis true"),
                    null);
        }
        LOG.log(
                Level.INFO,
                "Tollgate keeps its buckets in memory: no tollgate.redis and no application Redis; each instance"
                        + " limits alone (set tollgate.store to say so, or give it Redis to share the limits)");
        return inMemory(properties, recorder);
    }

    private static RateLimiter inMemory(TollgateProperties properties, MetricsRecorder recorder) {
        RateLimiter inMemory = InMemoryRateLimiter.builder()
                .maximumKeys(PropertiesReader.maximumKeys(properties))
                .build();
        if (recorder != null) {
            inMemory.onDecision(recorder.decisions()); // on Redis, the limiter records to it itself
        }
        return inMemory;
    }

    private static RedisRateLimiter redis(
            RedisSettings redis,
            ObjectProvider<TollgateRedisCustomizer> customizers,
            Consumer<RedisRateLimiter.Builder> connection) {
        RedisRateLimiter.Builder builder = RedisRateLimiter.builder();
        try {
            connection.accept(builder);
            RedisSettingsMapping.configure(builder, redis);
        } catch (IllegalArgumentException e) {
            throw new InvalidTollgatePropertiesException("tollgate.redis: " + e.getMessage(), e);
        }
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        try {
            return builder.build();
        } catch (IllegalStateException e) {
            if (!redis.requireRedisAtStart()) {
                throw e;
            }
            throw new InvalidTollgatePropertiesException(
                    "tollgate.redis.require-redis-at-start is true: " + e.getMessage(), e);
        }
    }
}
