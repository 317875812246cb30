/**
 * The memory store's provider ({@link io.tollgate.internal.store.MemoryStoreProvider}), the store of a configuration
 * that names none, found as every store is ({@link io.tollgate.runtime.Stores}).
 *
 * <p><b>No compatibility promise.</b> Exported only to Tollgate's own modules; it may change in any release.
 */
package io.tollgate.internal.store;
