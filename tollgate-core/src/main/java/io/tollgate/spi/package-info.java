/**
 * Where buckets live, for those who add a store: a {@link io.tollgate.spi.StoreProvider}, found by {@link
 * java.util.ServiceLoader} ({@code META-INF/services/io.tollgate.spi.StoreProvider}, or a module's {@code
 * provides}), owns a section of the configuration ({@code memory}, {@code redis}, or one of its own); the
 * configuration chooses the store by holding that section. The provider reads it into {@link
 * io.tollgate.spi.StoreSettings}, which open an {@link io.tollgate.spi.OpenedStore}: a {@link io.tollgate.RateLimiter}
 * on the store, how to ask whether it answers, and, where instances share it, how they share their counts of who is
 * limited ({@link io.tollgate.spi.SummaryExchange}). The server and the Spring Boot starter open whatever store the
 * configuration names through these types alone.
 */
package io.tollgate.spi;
