package io.tollgate.server.internal.envoy;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;

/**
 * Rate limits written in envoyproxy/ratelimit's configuration format, so that its users keep their files: a
 * {@code domain} and a tree of {@code descriptors}, each a {@code key}, an optional {@code value} (ending in
 * {@code *}: any value with that prefix), a {@code rate_limit} ({@code unit}, {@code requests_per_unit}, optional
 * {@code name}, {@code unlimited}, {@code replaces}), {@code shadow_mode}, {@code detailed_metric}, nested {@code
 * descriptors}. Each {@code rate_limit} becomes a token bucket of capacity {@code requests_per_unit} refilled
 * {@code requests_per_unit} per {@code unit} (a week is 7 days, a month 30 and a year 365), except that 0 {@code
 * requests_per_unit} refuses every request, as there; Tollgate's own keys set the capacity apart ({@code
 * tollgate_capacity}) or name a policy of the server's file instead of a {@code rate_limit} ({@code
 * tollgate_policy}). Any other key is refused, by name.
 *
 * <p>A request's descriptor, a list of entries, is matched as envoyproxy/ratelimit matches it: level by
 * level, an entry matches the descriptor of its key and value, else the first of its key whose value ends in
 * {@code *} and starts the entry's value, else one of its key alone; the limit is that of the descriptor the last
 * entry matched, and every entry's value is part of the bucket's key (each value its own bucket). Immutable and
 * thread-safe.
 */
public final class EnvoyRateLimits {

    /** One entry of a request's descriptor. */
    record Entry(String key, String value) {

        /** @throws NullPointerException if the key or value is null */
        Entry {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
        }
    }

    /**
     * A descriptor of the file that sets a limit, as the file says it: the same for every request it matches.
     *
     * @param policy the policy its bucket follows; null for a descriptor that is never limited or always refused
     *     (0 {@code requests_per_unit})
     * @param requestsPerUnit the limit as the file says it, for Envoy's {@code current_limit}; 0 for a policy
     * @param unit the file's unit, in upper case as Envoy's enum names it ({@code SECOND}); null for a policy
     * @param name the rate limit's {@code name}, or null
     * @param unlimited whether the descriptor is never limited
     * @param shadow whether it only counts what it would refuse ({@code shadow_mode})
     * @param replaces the names of the limits it replaces in a request that matches both ({@code replaces})
     * @param detailedMetric whether its metrics name the request's values too ({@code detailed_metric})
     * @param path the descriptor's place in the files: the domain, and each level's key and value
     */
    record Configured(
            Policy policy,
            long requestsPerUnit,
            String unit,
            String name,
            boolean unlimited,
            boolean shadow,
            Set<String> replaces,
            boolean detailedMetric,
            String path) {

        Configured {
            replaces = Set.copyOf(replaces);
        }
    }

    /**
     * What a request's descriptor matched.
     *
     * @param configured the descriptor of the file it matched
     * @param bucketKey the bucket's key: the domain and every entry, values of key-only and wildcard matches
     *     included
     * @param keys the request's entry keys joined by dots ({@code generic_key.remote_address}), for metrics:
     *     the file's words, never a client's values
     * @param detailedKeys for a {@code detailed_metric} descriptor, the descriptors it matched (each its key, and
     *     value if it has one, joined by {@code _}) joined by dots, and the last entry's value after a {@code _}
     *     ({@code generic_key_api.api_key_k-1}), as envoyproxy/ratelimit names it; null for any other
     */
    record Match(Configured configured, String bucketKey, String keys, String detailedKeys) {

        Policy policy() {
            return configured.policy();
        }

        long requestsPerUnit() {
            return configured.requestsPerUnit();
        }

        String unit() {
            return configured.unit();
        }

        String name() {
            return configured.name();
        }

        boolean unlimited() {
            return configured.unlimited();
        }

        boolean shadow() {
            return configured.shadow();
        }
    }

    /**
     * One descriptor of the file, and those nested in it; {@code metricKey} is its key, and value if it has one,
     * joined by {@code _}, as envoyproxy/ratelimit names it in metrics.
     */
    record Node(Configured limit, Level children, String metricKey) {}

    /** A wildcard descriptor: {@code key} with any value that starts with {@code prefix}. */
    record Wildcard(String key, String prefix, Node node) {}

    /**
     * One level of the tree: its descriptors by key and value ({@code key} alone for none), and those whose value
     * ends in {@code *}, in the file's order.
     */
    record Level(Map<String, Node> nodes, List<Wildcard> wildcards) {

        static final Level NONE = new Level(Map.of(), List.of());

        /** The descriptor {@code entry} matches here, as envoyproxy/ratelimit looks it up, or null. */
        Node find(Entry entry) {
            Node node = nodes.get(entry.key() + "=" + entry.value());
            for (int i = 0; node == null && i < wildcards.size(); i++) {
                Wildcard wildcard = wildcards.get(i);
                if (wildcard.key().equals(entry.key()) && entry.value().startsWith(wildcard.prefix())) {
                    node = wildcard.node();
                }
            }
            return node != null ? node : nodes.get(entry.key());
        }
    }

    private final Map<String, Level> domains;

    private EnvoyRateLimits(Map<String, Level> domains) {
        this.domains = Map.copyOf(domains);
    }

    /**
     * Reads a file, or every {@code .yaml} and {@code .yml} file of a directory, one domain each.
     *
     * @param policies the server's policies, which {@code tollgate_policy} may name
     * @throws IllegalArgumentException if a file cannot be read or is invalid, naming the file, the line and
     *     the setting; or two files have one domain
     */
    public static EnvoyRateLimits load(Path fileOrDirectory, Map<String, Policy> policies) {
        return load(fileOrDirectory, policies, false);
    }

    /**
     * Reads a file, or every {@code .yaml} and {@code .yml} file of a directory (in the order of their names).
     *
     * @param policies the server's policies, which {@code tollgate_policy} may name
     * @param mergeDomains whether files of one domain add their descriptors to it (envoyproxy/ratelimit's {@code
     *     MERGE_DOMAIN_CONFIG}), rather than being refused
     * @throws IllegalArgumentException if a file cannot be read or is invalid, naming the file, the line and
     *     the setting; or, unless {@code mergeDomains}, two files have one domain; or merged files define one
     *     descriptor twice
     */
    public static EnvoyRateLimits load(Path fileOrDirectory, Map<String, Policy> policies, boolean mergeDomains) {
        return new EnvoyRateLimits(EnvoyRateLimitFiles.load(fileOrDirectory, policies, mergeDomains));
    }

    /** Returns limits with no domain: for a server whose Envoy section hands out quota only. */
    public static EnvoyRateLimits none() {
        return new EnvoyRateLimits(Map.of());
    }

    /**
     * Reads the text of one file named {@code fileName} (for messages).
     *
     * @throws IllegalArgumentException if it is invalid, naming the file, the line and the setting
     */
    static EnvoyRateLimits parse(String text, String fileName, Map<String, Policy> policies) {
        return new EnvoyRateLimits(EnvoyRateLimitFiles.parse(text, fileName, policies));
    }

    /** Returns every policy the descriptors of every domain follow, each once, in the files' order. */
    List<Policy> policies() {
        Map<String, Policy> found = new LinkedHashMap<>();
        for (Level level : domains.values()) {
            collect(level, found);
        }
        return List.copyOf(found.values());
    }

    private static void collect(Level level, Map<String, Policy> found) {
        for (Node node : level.nodes().values()) {
            if (node.limit() != null && node.limit().policy() != null) {
                found.putIfAbsent(node.limit().policy().name(), node.limit().policy());
            }
            collect(node.children(), found);
        }
    }

    /** Whether {@code domain} has a configuration. */
    boolean hasDomain(String domain) {
        return domains.containsKey(domain);
    }

    /**
     * Returns what a request's descriptor matches in {@code domain}, or empty when it matches no limit (an
     * unknown domain, an entry that matches nothing, or a last descriptor without a limit).
     */
    Optional<Match> match(String domain, List<Entry> entries) {
        Level level = domains.get(domain);
        if (level == null || entries.isEmpty()) {
            return Optional.empty();
        }
        StringJoiner path = new StringJoiner(".");
        Node node = null;
        for (Entry entry : entries) {
            node = level.find(entry);
            if (node == null) {
                return Optional.empty();
            }
            path.add(node.metricKey());
            level = node.children();
        }
        Configured limit = node.limit();
        if (limit == null) {
            return Optional.empty();
        }
        StringBuilder bucket = new StringBuilder(domain);
        StringJoiner keys = new StringJoiner(".");
        for (Entry entry : entries) {
            bucket.append('|').append(escaped(entry.key())).append('=').append(escaped(entry.value()));
            keys.add(entry.key());
        }
        // As envoyproxy/ratelimit names a detailed descriptor: the descriptors matched, and the last entry's value
        String detailed = limit.detailedMetric()
                ? path + "_" + entries.get(entries.size() - 1).value()
                : null;
        return Optional.of(new Match(limit, bucket.toString(), keys.toString(), detailed));
    }

    /**
     * Returns the limit a request's descriptor asks for instead of the file's ({@code limit} in Envoy's
     * descriptor), in a domain of the file, as envoyproxy/ratelimit applies one: {@code requestsPerUnit} per
     * {@code unit}, a bucket of its own for the entries and the limit; empty in a domain the file does not
     * define.
     *
     * @param unit an Envoy unit name, such as {@code MINUTE}
     * @throws IllegalArgumentException if requestsPerUnit is below 1 or the unit is not one Envoy defines
     */
    Optional<Match> override(String domain, List<Entry> entries, long requestsPerUnit, String unit) {
        if (!domains.containsKey(domain) || entries.isEmpty()) {
            return Optional.empty();
        }
        Duration period = EnvoyRateLimitFiles.UNITS.get(unit.toLowerCase(Locale.ROOT));
        if (period == null) {
            throw new IllegalArgumentException("limit.unit must be SECOND, MINUTE, HOUR, DAY, WEEK, MONTH or YEAR");
        }
        if (requestsPerUnit < 1) {
            throw new IllegalArgumentException("limit.requests_per_unit must be at least 1");
        }
        StringBuilder bucket = new StringBuilder(domain);
        for (Entry entry : entries) {
            bucket.append('|').append(escaped(entry.key())).append('=').append(escaped(entry.value()));
        }
        String name = "envoy.override." + requestsPerUnit + "." + unit.toLowerCase(Locale.ROOT);
        Policy policy = Policy.of(name, Limit.of(requestsPerUnit, Rate.of(requestsPerUnit, period)));
        Configured configured = new Configured(
                policy, requestsPerUnit, unit, null, false, false, Set.of(), false, domain + "|override");
        // Its entry keys are the request's, matched against nothing: metrics name it "override" instead.
        return Optional.of(new Match(configured, bucket.toString(), "override", null));
    }

    /** Keeps a key or value that holds the separators from posing as two entries. */
    private static String escaped(String text) {
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("=", "\\=");
    }
}
