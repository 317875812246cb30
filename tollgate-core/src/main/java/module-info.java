/**
 * Tollgate's core: the API ({@code io.tollgate}), the in-memory limiter and the token bucket arithmetic every
 * store repeats, the guard a store outside the process sits under, overload protection, top keys, the configuration
 * tree, the store SPI and the runtime that opens a store. Its one internal package, the memory store's provider, is
 * exported only to Tollgate's own modules; on the class path (Spring Boot, servlet containers, the server's jar)
 * the same line is kept by the build's {@code ApiBoundaryTest}.
 */
module io.tollgate {
    requires com.github.benmanes.caffeine;

    exports io.tollgate;
    exports io.tollgate.config;
    exports io.tollgate.guard;
    exports io.tollgate.overload;
    exports io.tollgate.runtime;
    exports io.tollgate.spi;
    exports io.tollgate.top;

    uses io.tollgate.spi.StoreProvider;

    provides io.tollgate.spi.StoreProvider with
            io.tollgate.internal.store.MemoryStoreProvider;

    exports io.tollgate.internal.store to
            io.tollgate.server,
            io.tollgate.spring;
}
