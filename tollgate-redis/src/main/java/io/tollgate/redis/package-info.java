/**
 * {@link io.tollgate.redis.RedisRateLimiter}: buckets in Redis (standalone, Sentinel or Cluster), shared by
 * every instance, each decision one atomic Lua script; with a time budget, failure policies, a circuit
 * breaker per node, a deny cache, batching and Micrometer metrics ({@link io.tollgate.redis.MicrometerMetrics}).
 *
 * <p>Only those two classes are API; the rest of the package is how they work, package-private and free to
 * change. The scripts are resources of this package ({@code token_bucket.lua}, {@code
 * token_bucket_batch.lua}), each with a header describing its keys, arguments and reply.
 */
package io.tollgate.redis;
