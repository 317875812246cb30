/**
 * How Tollgate talks to its Lua scripts: {@link io.tollgate.redis.internal.TokenBucketScript} (a script
 * assembled with what both share, run by digest) and {@link io.tollgate.redis.internal.ScriptArguments}
 * (their arguments and their one reply shape), shared by the limiter and the benchmark harnesses.
 *
 * <p><b>No compatibility promise.</b> Types here are public only so that Tollgate's own modules can reach
 * them; they may change or disappear in any release. Applications use {@link
 * io.tollgate.redis.RedisRateLimiter}.
 */
package io.tollgate.redis.internal;
