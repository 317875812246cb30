/**
 * Tollgate's core: the API ({@code io.tollgate}) and the in-memory limiter. Its internal packages are exported
 * only to Tollgate's own modules, so that on the module path no application can come to depend on them; on the
 * class path (Spring Boot, servlet containers, the server's jar) the same line is kept by the build's {@code
 * ApiBoundaryTest}.
 */
module io.tollgate {
    requires com.github.benmanes.caffeine;

    exports io.tollgate;
    exports io.tollgate.config;
    exports io.tollgate.guard;
    exports io.tollgate.runtime;
    exports io.tollgate.spi;
    exports io.tollgate.top;

    uses io.tollgate.spi.StoreProvider;

    provides io.tollgate.spi.StoreProvider with
            io.tollgate.internal.store.MemoryStoreProvider;

    exports io.tollgate.internal to
            io.tollgate.http,
            io.tollgate.redis,
            io.tollgate.server,
            io.tollgate.spring;
    exports io.tollgate.internal.overload to
            io.tollgate.http,
            io.tollgate.server,
            io.tollgate.spring,
            io.tollgate.benchmarks;
    exports io.tollgate.internal.store to
            io.tollgate.server,
            io.tollgate.spring;
}
