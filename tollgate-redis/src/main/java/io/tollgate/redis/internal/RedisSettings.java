package io.tollgate.redis.internal;

import io.tollgate.FailurePolicy;
import io.tollgate.internal.config.ConfigException;
import io.tollgate.internal.config.ConfigNode;
import io.tollgate.internal.config.ConfigSection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * The {@code redis} settings as every surface names them (the server's file, the starter's {@code
 * tollgate.redis.*}), framework-neutral, with the defaults of the Redis limiter: read from a {@link ConfigNode} by
 * {@link #read}, and put onto a {@link io.tollgate.redis.RedisRateLimiter.Builder} by {@link RedisSettingsMapping}.
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

    /** The keys of the {@code redis} section. */
    public static final ConfigSection SECTION = ConfigSection.of(
            "redis",
            "uri",
            "cluster-uris",
            "timeout",
            "key-prefix",
            "failure-policy",
            "expected-instances",
            "batching",
            "require-redis-at-start",
            "deny-cache-max-age");

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

    /**
     * Reads the {@code redis} section: {@code uri} or {@code cluster-uris} (neither: the surface decides,
     * such as the starter sharing the application's Redis), {@code timeout}, {@code key-prefix}, {@code
     * failure-policy}, {@code expected-instances}, {@code batching}, {@code require-redis-at-start} and {@code
     * deny-cache-max-age}; an absent node gives the defaults.
     *
     * @throws ConfigException if a setting is invalid, naming it
     */
    public static RedisSettings read(ConfigNode node) {
        node.checkKeys(SECTION);
        ConfigNode uriNode = node.child("uri");
        ConfigNode clusterNode = node.child("cluster-uris");
        if (uriNode.isPresent() && clusterNode.isPresent()) {
            throw node.error("has both uri and cluster-uris; give one");
        }
        String uri = uriNode.isPresent() ? redisUri(uriNode, uriNode.requiredString()) : null;
        List<String> clusterUris = new ArrayList<>();
        for (ConfigNode element : clusterNode.elements()) {
            clusterUris.add(redisUri(element, element.requiredString()));
        }
        if (clusterNode.isPresent() && clusterUris.isEmpty()) {
            throw clusterNode.error("must list at least one node");
        }
        ConfigNode instances = node.child("expected-instances");
        long expected = instances.longValue(0);
        if (instances.isPresent() && (expected < 1 || expected > 10_000)) {
            throw instances.error("must be 1 to 10000, was " + expected);
        }
        return new RedisSettings(
                uri,
                clusterUris,
                node.child("timeout").duration(DEFAULTS.timeout()),
                node.child("key-prefix").string(DEFAULT_KEY_PREFIX),
                failurePolicy(node.child("failure-policy")),
                (int) expected,
                node.child("batching").bool(DEFAULTS.batching()),
                node.child("require-redis-at-start").bool(DEFAULTS.requireRedisAtStart()),
                node.child("deny-cache-max-age").duration(DEFAULTS.denyCacheMaxAge()));
    }

    private static String redisUri(ConfigNode node, String text) {
        String scheme = text.contains("://") ? text.substring(0, text.indexOf("://")) : "";
        if (!Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel").contains(scheme.toLowerCase(Locale.ROOT))) {
            throw node.error("must be a redis://, rediss:// or redis-sentinel:// URI, was '" + text + "'");
        }
        return text;
    }

    private static FailurePolicy failurePolicy(ConfigNode node) {
        String text = node.string(DEFAULT_FAILURE_POLICY.name()).toLowerCase(Locale.ROOT);
        return switch (text) {
            case "allow" -> FailurePolicy.ALLOW;
            case "deny" -> FailurePolicy.DENY;
            case "local" -> FailurePolicy.LOCAL;
            default -> throw node.error("must be allow, deny or local, was '" + text + "'");
        };
    }
}
