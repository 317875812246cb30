package io.tollgate.server.internal.envoy;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.http.internal.ConfigSections;
import io.tollgate.http.internal.YamlConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;
import java.util.stream.Stream;

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

    private static final Set<String> FILE = Set.of("domain", "descriptors");
    private static final Set<String> DESCRIPTOR =
            Set.of("key", "value", "rate_limit", "shadow_mode", "detailed_metric", "descriptors", "tollgate_policy");
    private static final Set<String> RATE_LIMIT =
            Set.of("unit", "requests_per_unit", "name", "unlimited", "replaces", "tollgate_capacity");
    private static final Set<String> REPLACES = Set.of("name");
    private static final Map<String, Duration> UNITS = Map.of(
            "second", Duration.ofSeconds(1),
            "minute", Duration.ofMinutes(1),
            "hour", Duration.ofHours(1),
            "day", Duration.ofDays(1),
            "week", Duration.ofDays(7),
            "month", Duration.ofDays(30),
            "year", Duration.ofDays(365));

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
    private record Node(Configured limit, Level children, String metricKey) {}

    /** A wildcard descriptor: {@code key} with any value that starts with {@code prefix}. */
    private record Wildcard(String key, String prefix, Node node) {}

    /**
     * One level of the tree: its descriptors by key and value ({@code key} alone for none), and those whose value
     * ends in {@code *}, in the file's order.
     */
    private record Level(Map<String, Node> nodes, List<Wildcard> wildcards) {

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
        List<Path> files;
        try (Stream<Path> listed =
                Files.isDirectory(fileOrDirectory) ? Files.list(fileOrDirectory) : Stream.of(fileOrDirectory)) {
            files = listed.filter(file -> Files.isDirectory(fileOrDirectory)
                            ? file.getFileName().toString().matches(".*\\.ya?ml")
                            : true)
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read envoy config '" + fileOrDirectory + "': " + e, e);
        }
        Map<String, Level> domains = new LinkedHashMap<>();
        for (Path file : files) {
            String text;
            try {
                text = Files.readString(file, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read envoy config '" + file + "': " + e.getMessage(), e);
            }
            parse(text, file.toString(), policies, domains, mergeDomains);
        }
        return new EnvoyRateLimits(domains);
    }

    /**
     * Reads the text of one file named {@code fileName} (for messages).
     *
     * @throws IllegalArgumentException if it is invalid, naming the file, the line and the setting
     */
    static EnvoyRateLimits parse(String text, String fileName, Map<String, Policy> policies) {
        Map<String, Level> domains = new LinkedHashMap<>();
        parse(text, fileName, policies, domains, false);
        return new EnvoyRateLimits(domains);
    }

    private static void parse(
            String text,
            String fileName,
            Map<String, Policy> policies,
            Map<String, Level> domains,
            boolean mergeDomains) {
        try {
            ConfigNode root = YamlConfig.parse(text);
            root.checkKeys(FILE);
            ConfigNode domainNode = root.child("domain");
            String domain = domainNode.requiredString();
            if (domain.isBlank()) {
                throw domainNode.error("must not be empty");
            }
            Level defined = domains.get(domain);
            if (defined != null && !mergeDomains) {
                throw domainNode.error("domain '" + domain + "' is defined twice");
            }
            domains.put(
                    domain,
                    descriptors(
                            root.child("descriptors"),
                            domain,
                            List.of(),
                            policies,
                            defined == null ? Level.NONE : defined));
        } catch (ConfigException e) {
            throw new IllegalArgumentException(e.messageIn(fileName), e);
        }
    }

    /** Reads a list of descriptors into a level that already holds {@code defined} (another file's, merged). */
    private static Level descriptors(
            ConfigNode list, String domain, List<String> path, Map<String, Policy> policies, Level defined) {
        if (!list.isPresent()) {
            return defined;
        }
        Map<String, Node> nodes = new LinkedHashMap<>(defined.nodes());
        List<Wildcard> wildcards = new ArrayList<>(defined.wildcards());
        for (ConfigNode descriptor : list.elements()) {
            descriptor.checkKeys(DESCRIPTOR);
            String key = descriptor.child("key").requiredString();
            ConfigNode valueNode = descriptor.child("value");
            String value = valueNode.isPresent() ? valueNode.requiredString() : null;
            String id = value == null ? key : key + "=" + value;
            if (nodes.containsKey(id)) {
                throw descriptor.error("duplicate descriptor " + id);
            }
            List<String> here = new ArrayList<>(path);
            here.add(id);
            Node node = new Node(
                    limit(descriptor, domain, here, policies),
                    descriptors(descriptor.child("descriptors"), domain, here, policies, Level.NONE),
                    value == null ? key : key + "_" + value);
            nodes.put(id, node);
            if (value != null && value.endsWith("*")) {
                wildcards.add(new Wildcard(key, value.substring(0, value.length() - 1), node));
            }
        }
        return new Level(Collections.unmodifiableMap(nodes), List.copyOf(wildcards));
    }

    private static Configured limit(
            ConfigNode descriptor, String domain, List<String> path, Map<String, Policy> policies) {
        boolean shadow = descriptor.child("shadow_mode").bool(false);
        boolean detailed = descriptor.child("detailed_metric").bool(false);
        String where = domain + "|" + String.join("|", path);
        ConfigNode policyNode = descriptor.child("tollgate_policy");
        ConfigNode rateLimit = descriptor.child("rate_limit");
        if (policyNode.isPresent()) {
            if (rateLimit.isPresent()) {
                throw policyNode.error("names a policy: leave rate_limit out, or this out");
            }
            return new Configured(
                    ConfigSections.policy(policyNode, policies),
                    0,
                    null,
                    null,
                    false,
                    shadow,
                    Set.of(),
                    detailed,
                    where);
        }
        if (!rateLimit.isPresent()) {
            return null; // a level of the tree that only holds others
        }
        rateLimit.checkKeys(RATE_LIMIT);
        String name = rateLimit.child("name").string(null);
        ConfigNode replacesNode = rateLimit.child("replaces");
        Set<String> replaces = replaces(replacesNode);
        if (name != null && replaces.contains(name)) {
            throw replacesNode.error("must not name its own rate limit, '" + name + "'");
        }
        if (rateLimit.child("unlimited").bool(false)) {
            for (String limitKey : List.of("unit", "requests_per_unit", "tollgate_capacity")) {
                if (rateLimit.child(limitKey).isPresent()) {
                    throw rateLimit.child(limitKey).error("does not apply to an unlimited rate limit: leave it out");
                }
            }
            return new Configured(null, 0, null, name, true, shadow, replaces, detailed, where);
        }
        ConfigNode unitNode = rateLimit.child("unit");
        String unitText = unitNode.requiredString().toLowerCase(Locale.ROOT);
        Duration unit = UNITS.get(unitText);
        if (unit == null) {
            throw unitNode.error(
                    "must be second, minute, hour, day, week, month or year, was '" + unitNode.string(null) + "'");
        }
        ConfigNode perUnit = rateLimit.child("requests_per_unit");
        long requests = perUnit.requiredLong();
        ConfigNode capacityNode = rateLimit.child("tollgate_capacity");
        String upperUnit = unitText.toUpperCase(Locale.ROOT);
        if (requests == 0) { // envoyproxy/ratelimit's way to block: every request is over the limit
            if (capacityNode.isPresent()) {
                throw capacityNode.error("applies only to a limit above 0 requests_per_unit");
            }
            return new Configured(null, 0, upperUnit, name, false, shadow, replaces, detailed, where);
        }
        long capacity = capacityNode.longValue(requests);
        Policy policy;
        try {
            policy = Policy.of(policyName(domain, path), Limit.of(capacity, Rate.of(requests, unit)));
        } catch (IllegalArgumentException e) {
            throw (capacityNode.isPresent() ? capacityNode : perUnit).error(e);
        }
        return new Configured(policy, requests, upperUnit, name, false, shadow, replaces, detailed, where);
    }

    /** The names a {@code replaces} list gives, each an entry {@code - name: NAME}. */
    private static Set<String> replaces(ConfigNode list) {
        if (!list.isPresent()) {
            return Set.of();
        }
        Set<String> names = new LinkedHashSet<>();
        for (ConfigNode replace : list.elements()) {
            replace.checkKeys(REPLACES);
            names.add(replace.child("name").requiredString());
        }
        return names;
    }

    /**
     * A policy name that stays the same while the descriptor's place in the tree does, whatever else the file
     * holds, so that its buckets survive a reload: a digest of the domain and the path.
     */
    private static String policyName(String domain, List<String> path) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest((domain + "\u0000" + String.join("\u0000", path)).getBytes(StandardCharsets.UTF_8));
            return "envoy." + HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
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
        Duration period = UNITS.get(unit.toLowerCase(Locale.ROOT));
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
