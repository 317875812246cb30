/**
 * Tollgate's API: {@link io.tollgate.RateLimiter} and the values it works with ({@link io.tollgate.Policy},
 * {@link io.tollgate.Limit}, {@link io.tollgate.Rate}, {@link io.tollgate.Decision},
 * {@link io.tollgate.BucketState}) and {@link io.tollgate.InMemoryRateLimiter}. Beside them, for those who write a
 * store or a limiter of their own (applications have no need of them): the token bucket arithmetic that every store
 * repeats exactly ({@link io.tollgate.TokenBucket}, {@link io.tollgate.PolicyArithmetic}), the argument checks and
 * the one key rule of every limiter ({@link io.tollgate.LimiterArguments}), its listeners ({@link
 * io.tollgate.DecisionListeners}), the permits counted in the process ({@link io.tollgate.InFlightSlots}) and the
 * keys of warm-ups ({@link io.tollgate.WarmUpKeys}).
 *
 * <p>Every value type is immutable and every limiter thread-safe. Arguments are checked where they enter:
 * a bad one is an {@link IllegalArgumentException} or {@link NullPointerException} whose message names it.
 * Time is in microseconds on a {@link io.tollgate.TimeSource}, durations are {@link java.time.Duration}s, and
 * the arithmetic is exact integer math (see docs/concepts.md for its supported range).
 */
package io.tollgate;
