/**
 * The guard that every store sits under: {@link io.tollgate.internal.guard.GuardedRateLimiter} over a {@link
 * io.tollgate.internal.guard.BucketStore}, with the time budget, a circuit breaker per node, the failure
 * policy and its {@code LOCAL} fallback on the last state the store reported, the deny cache, the log of
 * degraded decisions and the metrics. docs/architecture.md draws the decision path through it.
 *
 * <p><b>No compatibility promise.</b> Types here are public only so that Tollgate's store modules can reach
 * them; they may change or disappear in any release. Applications use {@code io.tollgate} and the limiters
 * the store modules build.
 */
package io.tollgate.internal.guard;
