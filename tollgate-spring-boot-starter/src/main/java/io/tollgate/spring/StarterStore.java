package io.tollgate.spring;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.tollgate.config.ConfigNode;
import io.tollgate.redis.MicrometerMetrics;
import io.tollgate.redis.RedisConnection;
import io.tollgate.redis.RedisCustomization;
import io.tollgate.runtime.Stores;
import io.tollgate.runtime.TollgateRuntime;
import io.tollgate.spi.StoreContext;
import io.tollgate.spi.StoreSettings;
import io.tollgate.top.TopKeysSettings;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The starter's store, opened as a {@link TollgateRuntime} on what its settings and the application give: Redis of
 * Tollgate's own ({@code tollgate.redis.uri} or {@code cluster-uris}), else the application's Redis (its Lettuce
 * client shared, or a Lettuce client of Tollgate's own made from {@code spring.data.redis.*} when the application
 * is on another client), else memory. {@code tollgate.store} states the store: {@code redis} fails the start where
 * no Redis can be used, {@code memory} keeps the buckets in memory whatever Redis there is. Stateless.
 */
final class StarterStore {

    private static final System.Logger LOG = System.getLogger("io.tollgate.spring");

    private static final String REDIS = "redis";

    private StarterStore() {}

    /**
     * Opens the store, counting who it limits as {@code topKeys} says.
     *
     * @param recorder where the limiter reports; null for nowhere
     * @throws InvalidTollgatePropertiesException if a setting is invalid, or {@code tollgate.store} is {@code redis}
     *     and no Redis can be used, saying how to give one
     */
    static TollgateRuntime open(
            TollgateProperties properties,
            ObjectProvider<ApplicationRedisConfiguration.ApplicationRedisClient> applicationRedis,
            ObjectProvider<ApplicationRedisConfiguration.ApplicationRedisSettings> applicationRedisSettings,
            ObjectProvider<TollgateRedisCustomizer> customizers,
            MicrometerMetrics recorder,
            TopKeysSettings topKeys) {
        StoreSettings redis = read(REDIS, properties.redis());
        boolean redisNamed = redis.needs().isEmpty();
        List<Object> extensions = new ArrayList<>();
        if (properties.store() == TollgateProperties.Store.MEMORY) {
            if (redisNamed) {
                throw new InvalidTollgatePropertiesException(
                        "tollgate.store is memory, but tollgate.redis names a Redis: remove one of them", null);
            }
            return open(
                    read(Stores.DEFAULT, properties.memory()), recorder, extensions, topKeys, properties, customizers);
        }
        boolean useApplication = properties.redis().useApplicationRedis();
        ApplicationRedisConfiguration.ApplicationRedisClient shared =
                redisNamed || !useApplication ? null : applicationRedis.getIfAvailable();
        ApplicationRedisConfiguration.ApplicationRedisSettings settings =
                redisNamed || !useApplication || shared != null ? null : applicationRedisSettings.getIfAvailable();
        if (shared != null) {
            extensions.add(new RedisConnection(shared.description().get(), builder -> {
                AbstractRedisClient client = shared.client().get();
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
            }));
        } else if (settings != null) {
            extensions.add(new RedisConnection(settings.description(), settings.connection()));
        }
        if (redisNamed || !extensions.isEmpty()) {
            return open(redis, recorder, extensions, topKeys, properties, customizers);
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
        return open(read(Stores.DEFAULT, properties.memory()), recorder, extensions, topKeys, properties, customizers);
    }

    /** Reads {@code tollgate.SECTION.*} as the server reads its section of that name. */
    private static StoreSettings read(String section, Object bean) {
        Map<String, Object> tree = PropertiesReader.tree(bean, Stores.schema(section));
        try {
            return Stores.read(section, ConfigNode.of(Map.of(section, tree)));
        } catch (IllegalArgumentException e) {
            throw new InvalidTollgatePropertiesException("tollgate." + e.getMessage(), e);
        }
    }

    /**
     * Opens {@code store} with the application's customizers last. A setting the limiter refuses is a property's
     * problem; a customizer's own exception is the application's, and passes as it is.
     */
    private static TollgateRuntime open(
            StoreSettings store,
            MicrometerMetrics recorder,
            List<Object> extensions,
            TopKeysSettings topKeys,
            TollgateProperties properties,
            ObjectProvider<TollgateRedisCustomizer> customizers) {
        AtomicBoolean customizing = new AtomicBoolean();
        List<Object> all = new ArrayList<>(extensions);
        if (recorder != null) {
            all.add(recorder);
        }
        all.add(topKeys);
        all.add(new RedisCustomization(builder -> customizing.set(true)));
        all.addAll(customizers
                .orderedStream()
                .map(customizer -> new RedisCustomization(customizer::customize))
                .toList());
        try {
            return TollgateRuntime.open(store, new StoreContext(null, all));
        } catch (InvalidTollgatePropertiesException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            if (customizing.get()) {
                throw e;
            }
            throw new InvalidTollgatePropertiesException("tollgate." + store.name() + ": " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            if (!properties.redis().requireRedisAtStart() || !store.name().equals(REDIS)) {
                throw e;
            }
            throw new InvalidTollgatePropertiesException(
                    "tollgate.redis.require-redis-at-start is true: " + e.getMessage(), e);
        }
    }
}
