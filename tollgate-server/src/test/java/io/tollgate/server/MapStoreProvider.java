package io.tollgate.server;

import io.tollgate.TimeSource;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import io.tollgate.fixtures.MapBucketStore;
import io.tollgate.guard.GuardedRateLimiter;
import io.tollgate.guard.MetricsRecorder;
import io.tollgate.spi.OpenedStore;
import io.tollgate.spi.StoreContext;
import io.tollgate.spi.StoreProvider;
import io.tollgate.spi.StoreSettings;

/**
 * A store written only in tests: core's {@link MapBucketStore} under the guard, chosen by a {@code map} section. The
 * server finds it as it finds memory and Redis, through {@link java.util.ServiceLoader}, when a {@code
 * META-INF/services} file on its class path names it; nothing else in the product knows it.
 */
public final class MapStoreProvider implements StoreProvider {

    private static final ConfigSection SCHEMA = ConfigSection.of("map");

    /** Creates the provider; {@link java.util.ServiceLoader} does. */
    public MapStoreProvider() {}

    @Override
    public ConfigSection schema() {
        return SCHEMA;
    }

    @Override
    public StoreSettings read(ConfigNode section) {
        section.checkKeys(SCHEMA);
        return new Settings();
    }

    /** The {@code map} section, which holds nothing. */
    record Settings() implements StoreSettings {

        @Override
        public String name() {
            return SCHEMA.name();
        }

        @Override
        public String description() {
            return "a map in this process";
        }

        @Override
        public OpenedStore open(StoreContext context) {
            TimeSource clock = context.clientClock() == null ? TimeSource.system() : context.clientClock();
            GuardedRateLimiter<String> limiter =
                    new GuardedRateLimiter<>(new MapBucketStore(clock), MapBucketStore.patient(clock));
            context.extensions(MetricsRecorder.class).forEach(recorder -> limiter.onDecision(recorder.decisions()));
            return OpenedStore.inProcess(SCHEMA.name(), limiter, limiter::close);
        }
    }
}
