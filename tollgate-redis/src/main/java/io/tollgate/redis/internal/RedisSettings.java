package io.tollgate.redis.internal;

import io.tollgate.FailurePolicy;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * The {@code redis} settings as every surface names them (the server's file, the starter's {@code
 * tollgate.redis.*}), framework-neutral, with the defaults of the Redis limiter: read from a {@link ConfigNode} by
 * {@link #read}, and put onto a {@link io.tollgate.redis.RedisRateLimiter.Builder} by {@code RedisSettingsMapping}.
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
 * @param leases the names of the policies whose hot keys are answered from leases ({@code *}: every policy)
 * @param username the user Redis authenticates (ACL), or null for the URI's or the default user
 * @param password the password Redis authenticates, or null for the URI's or none; never printed
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
        Duration denyCacheMaxAge,
        List<String> leases,
        String username,
        String password) {

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
            "deny-cache-max-age",
            "leases",
            "username",
            "password");

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
            Duration.ofMillis(DEFAULT_DENY_CACHE_MAX_AGE_MILLIS),
            List.of(),
            null,
            null);

    /**
     * @throws NullPointerException if a value but uri is null
     * @throws IllegalArgumentException if both uri and cluster URIs are given
     */
    public RedisSettings {
        clusterUris = List.copyOf(clusterUris);
        leases = List.copyOf(leases);
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

    /**
     * Returns where Redis is, for messages: the uri, or the cluster URIs joined by commas, each with the password
     * of its user information masked.
     */
    public String target() {
        return uri != null
                ? masked(uri)
                : String.join(
                        ", ", clusterUris.stream().map(RedisSettings::masked).toList());
    }

    /** Returns {@code uri} with the password of its user information, if any, as {@code ***}. */
    public static String masked(String uri) {
        int scheme = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        if (scheme < 0 || at < scheme) {
            return uri;
        }
        // redis://user:password@host, or redis://password@host: what comes before a colon is the user
        String userInfo = uri.substring(scheme + 3, at);
        int colon = userInfo.indexOf(':');
        return uri.substring(0, scheme + 3) + (colon < 0 ? "" : userInfo.substring(0, colon + 1)) + "***"
                + uri.substring(at);
    }

    /** The settings, their secrets masked. */
    @Override
    public String toString() {
        return "RedisSettings[target=" + (hasTarget() ? target() : "none") + ", timeout=" + timeout + ", keyPrefix="
                + keyPrefix + ", failurePolicy=" + failurePolicy + ", expectedInstances=" + expectedInstances
                + ", batching=" + batching + ", requireRedisAtStart=" + requireRedisAtStart + ", denyCacheMaxAge="
                + denyCacheMaxAge + ", leases=" + leases + ", username=" + username + ", password="
                + (password == null ? "none" : "***")
                + "]";
    }

    /**
     * Reads the {@code redis} section: {@code uri} or {@code cluster-uris} (neither: the surface decides,
     * such as the starter sharing the application's Redis), {@code timeout}, {@code key-prefix}, {@code
     * failure-policy}, {@code expected-instances}, {@code batching}, {@code require-redis-at-start}, {@code
     * deny-cache-max-age}, {@code leases}, {@code username} and {@code password}; an absent node gives the defaults. The URIs,
     * the user and the password are {@linkplain ConfigNode#secret secrets}: each may come from the environment or
     * a file.
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
        String uri = uriNode.isPresent() ? redisUri(uriNode, uriNode.secret(null)) : null;
        List<String> clusterUris = new ArrayList<>();
        for (ConfigNode element : clusterNode.elements()) {
            clusterUris.add(redisUri(element, element.secret(null)));
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
                node.child("deny-cache-max-age").duration(DEFAULTS.denyCacheMaxAge()),
                leases(node.child("leases")),
                node.child("username").secret(null),
                node.child("password").secret(null));
    }

    /** Reads the names of the leased policies: a list, or one comma-separated string; {@code *} for every policy. */
    private static List<String> leases(ConfigNode node) {
        List<String> names = node.strings();
        for (String name : names) {
            if (name == null || name.isBlank()) {
                throw node.error("must name policies (or * for every policy), had an empty name");
            }
        }
        return names;
    }

    private static String redisUri(ConfigNode node, String text) {
        String scheme = text.contains("://") ? text.substring(0, text.indexOf("://")) : "";
        if (!Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel").contains(scheme.toLowerCase(Locale.ROOT))) {
            // named without the text when it has no scheme at all: it may be a password put in the wrong place
            throw node.error("must be a redis://, rediss:// or redis-sentinel:// URI, was "
                    + (scheme.isEmpty() ? "text without a scheme" : "'" + masked(text) + "'"));
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
