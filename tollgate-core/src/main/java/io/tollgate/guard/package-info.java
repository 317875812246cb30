/**
 * The guard that a store outside the process sits under: {@link io.tollgate.guard.GuardedRateLimiter}, a {@link
 * io.tollgate.RateLimiter} over a {@link io.tollgate.guard.BucketStore} (and, for concurrency limits, a {@link
 * io.tollgate.guard.PermitStore}), with the time budget, a circuit breaker per node, the failure policy and its
 * {@code LOCAL} fallback on the last state the store reported, the deny cache, the log of degraded decisions and
 * the metrics ({@link io.tollgate.guard.MetricsRecorder}). Redis is one such store; a store of one's own implements
 * the two store interfaces, wraps them in a {@code GuardedRateLimiter} with {@link io.tollgate.guard.GuardSettings},
 * proves itself with the store conformance kit of core's test jar, and is found by configuration through {@link
 * io.tollgate.spi.StoreProvider}. ARCHITECTURE.md walks a decision through it and a new store through the
 * seams.
 *
 * <p>Applications use {@code io.tollgate} and the limiters that store modules build; this package is for those who
 * write a store. Everything not public here (the deadlines, the deny cache, the local buckets) is the guard's own.
 */
package io.tollgate.guard;
