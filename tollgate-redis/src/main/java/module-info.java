/**
 * Tollgate on Redis ({@code io.tollgate.redis}): buckets shared by every instance, each decision one Lua script.
 * Its internal package is exported only to Tollgate's modules that configure a Redis limiter from settings.
 */
module io.tollgate.redis {
    requires transitive io.tollgate;
    requires transitive lettuce.core;
    requires io.netty.common;
    requires io.netty.transport;
    requires static micrometer.core;
    requires static org.slf4j;

    uses org.slf4j.spi.SLF4JServiceProvider;

    provides io.tollgate.spi.StoreProvider with
            io.tollgate.redis.internal.store.RedisStoreProvider;

    exports io.tollgate.redis;
    exports io.tollgate.redis.internal to
            io.tollgate.server,
            io.tollgate.spring,
            io.tollgate.benchmarks;
    exports io.tollgate.redis.internal.store to
            io.tollgate.server,
            io.tollgate.spring;
}
