/**
 * Tollgate's API: {@link io.tollgate.RateLimiter} and the values it works with ({@link io.tollgate.Policy},
 * {@link io.tollgate.Limit}, {@link io.tollgate.Rate}, {@link io.tollgate.Decision},
 * {@link io.tollgate.BucketState}) and {@link io.tollgate.InMemoryRateLimiter}. The token bucket arithmetic that
 * every backend shares lives in {@code io.tollgate.internal}, which carries no compatibility promise.
 *
 * <p>Every value type is immutable and every limiter thread-safe. Arguments are checked where they enter:
 * a bad one is an {@link IllegalArgumentException} or {@link NullPointerException} whose message names it.
 * Time is in microseconds on a {@link io.tollgate.TimeSource}, durations are {@link java.time.Duration}s, and
 * the arithmetic is exact integer math (see docs/concepts.md for its supported range).
 */
package io.tollgate;
