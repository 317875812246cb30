package io.tollgate.internal;

import io.tollgate.FailurePolicy;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The {@code redis} settings as every surface names them (the server's file, the starter's {@code
 * tollgate.redis.*}), framework-neutral, with the defaults of the Redis limiter. Read by {@code
 * ConfigSections.redis} in tollgate-http, and put onto a {@code RedisRateLimiter.Builder} in one place, in
 * tollgate-redis.
 *
 * @param uri one Redis ({@code redis://}, {@code rediss://}, {@code redis-sentinel://}), or null
 * @param clusterUris the seed nodes of a Redis Cluster, or empty; at most one of uri and these is given
 * @param timeout the time budget of a decision
 * @param keyPrefix the prefix of every key
 * @param failurePolicy what decides while Redis cannot
 * @param expectedInstances how many instances share the limits, for {@code local}; 0 when not said
 * @param batching whether decisions that arrive together share one script call
 * @param requireRedisAtStart whether starting fails when Redis cannot be reached
 * @param denyCacheMaxAge how long the deny cache relies on a refusal at most
 */
public record RedisSettings(
        String uri,
        List<String> clusterUris,
        Duration timeout,
        String keyPrefix,
        FailurePolicy failurePolicy,
        int expectedInstances,
        boolean batching,
        boolean requireRedisAtStart,
        Duration denyCacheMaxAge) {

    /** The time budget of a decision unless one is set, in milliseconds. */
    public static final long DEFAULT_TIMEOUT_MILLIS = 50;

    /** The prefix of every bucket's key unless one is set. */
    public static final String DEFAULT_KEY_PREFIX = "tollgate:";

    /**
     * How long the deny cache relies on a refusal at most unless set, in milliseconds: chosen by the deny-cache
     * flood measurement in docs/benchmarks.md.
     */
    public static final long DEFAULT_DENY_CACHE_MAX_AGE_MILLIS = 5_000;

    /** What decides while Redis cannot, unless set. */
    public static final FailurePolicy DEFAULT_FAILURE_POLICY = FailurePolicy.LOCAL;

    /** The settings when none is given: no target, and every default. */
    public static final RedisSettings DEFAULTS = new RedisSettings(
            null,
            List.of(),
            Duration.ofMillis(DEFAULT_TIMEOUT_MILLIS),
            DEFAULT_KEY_PREFIX,
            DEFAULT_FAILURE_POLICY,
            0,
            true,
            false,
            Duration.ofMillis(DEFAULT_DENY_CACHE_MAX_AGE_MILLIS));

    /**
     * @throws NullPointerException if a value but uri is null
     * @throws IllegalArgumentException if both uri and cluster URIs are given
     */
    public RedisSettings {
        clusterUris = List.copyOf(clusterUris);
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        Objects.requireNonNull(failurePolicy, "failurePolicy");
        Objects.requireNonNull(denyCacheMaxAge, "denyCacheMaxAge");
        if (uri != null && !clusterUris.isEmpty()) {
            throw new IllegalArgumentException("give uri or cluster-uris, not both");
        }
    }

    /** Returns whether these settings say where Redis is (a uri or cluster URIs). */
    public boolean hasTarget() {
        return uri != null || !clusterUris.isEmpty();
    }

    /** Returns where Redis is, for messages: the uri, or the cluster URIs joined by commas. */
    public String target() {
        return uri != null ? uri : String.join(", ", clusterUris);
    }
}
