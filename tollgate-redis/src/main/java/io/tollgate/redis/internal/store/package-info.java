/**
 * The {@code redis} store that configuration chooses: {@link io.tollgate.redis.internal.store.RedisStoreProvider},
 * found by {@link java.util.ServiceLoader}, reads the {@code redis} section and opens a {@link
 * io.tollgate.redis.RedisRateLimiter} on it. Above the limiter's package, which never names it.
 *
 * <p><b>No compatibility promise.</b> Types here are public only so that the service loader and Tollgate's own
 * modules can reach them; they may change or disappear in any release. Applications choose the store by
 * configuration, or build a {@link io.tollgate.redis.RedisRateLimiter}.
 */
package io.tollgate.redis.internal.store;
