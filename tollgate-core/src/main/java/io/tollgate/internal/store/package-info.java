/**
 * Where buckets live, chosen by configuration: a {@link io.tollgate.spi.StoreProvider} for each store
 * (memory in core, Redis in {@code tollgate-redis}), found by {@link java.util.ServiceLoader} and chosen by the
 * section of the configuration that names it ({@link io.tollgate.internal.store.Stores}); and the {@link
 * io.tollgate.internal.store.StoreRuntime}, the one object beneath every surface that owns the store, its
 * observers, the top keys and the order they close in.
 *
 * <p><b>No compatibility promise.</b> Exported only to Tollgate's own modules; it may change in any release.
 */
package io.tollgate.internal.store;
