/**
 * The stores found ({@link io.tollgate.internal.store.Stores}): a {@link io.tollgate.spi.StoreProvider} for each
 * (memory's here, {@link io.tollgate.internal.store.MemoryStoreProvider}; Redis's in {@code tollgate-redis}), found
 * by {@link java.util.ServiceLoader}, and the choice a configuration makes by the section it holds.
 *
 * <p><b>No compatibility promise.</b> Exported only to Tollgate's own modules; it may change in any release.
 */
package io.tollgate.internal.store;
