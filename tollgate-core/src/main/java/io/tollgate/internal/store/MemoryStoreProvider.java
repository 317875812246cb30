package io.tollgate.internal.store;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.RateLimiter;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import io.tollgate.guard.MetricsRecorder;
import io.tollgate.spi.OpenedStore;
import io.tollgate.spi.StoreContext;
import io.tollgate.spi.StoreProvider;
import io.tollgate.spi.StoreSettings;
import java.util.Optional;

/**
 * Buckets in this process's memory ({@link InMemoryRateLimiter}), the store of a configuration that names none:
 * its {@code memory} section holds {@code maximum-keys}, the most keys held at once. Stateless.
 */
public final class MemoryStoreProvider implements StoreProvider {

    /** The {@code memory} section's keys. */
    public static final ConfigSection SCHEMA = ConfigSection.of("memory", "maximum-keys");

    /** Creates the provider; {@link java.util.ServiceLoader} does. */
    public MemoryStoreProvider() {}

    @Override
    public ConfigSection schema() {
        return SCHEMA;
    }

    /**
     * Reads the {@code memory} section: {@code maximum-keys}, at least 1.
     *
     * @throws io.tollgate.config.ConfigException if a setting is invalid or unknown, naming it
     */
    @Override
    public Settings read(ConfigNode section) {
        section.checkKeys(SCHEMA);
        ConfigNode maximumKeys = section.child("maximum-keys");
        long keys = maximumKeys.longValue(InMemoryRateLimiter.DEFAULT_MAXIMUM_KEYS);
        if (keys < 1) {
            throw maximumKeys.error("must be at least 1, was " + keys);
        }
        return new Settings(keys);
    }

    @Override
    public Optional<OpenedStore> adopt(RateLimiter limiter) {
        return limiter instanceof InMemoryRateLimiter
                ? Optional.of(OpenedStore.inProcess(SCHEMA.name(), limiter, () -> {}))
                : Optional.empty();
    }

    /**
     * The {@code memory} section, read.
     *
     * @param maximumKeys the most keys held at once; beyond, the least recently used are forgotten
     */
    public record Settings(long maximumKeys) implements StoreSettings {

        /** The settings of a configuration without a {@code memory} section. */
        public static final Settings DEFAULTS = new Settings(InMemoryRateLimiter.DEFAULT_MAXIMUM_KEYS);

        @Override
        public String name() {
            return SCHEMA.name();
        }

        @Override
        public String description() {
            return "memory";
        }

        @Override
        public OpenedStore open(StoreContext context) {
            InMemoryRateLimiter.Builder builder = InMemoryRateLimiter.builder().maximumKeys(maximumKeys);
            RateLimiter limiter =
                    (context.clientClock() == null ? builder : builder.timeSource(context.clientClock())).build();
            // The meters observe its decisions as any listener does; a store that decides itself reports its own
            context.extensions(MetricsRecorder.class).forEach(recorder -> limiter.onDecision(recorder.decisions()));
            return OpenedStore.inProcess(SCHEMA.name(), limiter, () -> {}); // the buckets go with the limiter
        }
    }
}
