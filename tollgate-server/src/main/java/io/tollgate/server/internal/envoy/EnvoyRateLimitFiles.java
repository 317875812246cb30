package io.tollgate.server.internal.envoy;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.http.RuleSections;
import io.tollgate.http.YamlConfig;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Configured;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Level;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Node;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Wildcard;
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
import java.util.Set;
import java.util.stream.Stream;

/**
 * Reads envoyproxy/ratelimit's files into the tree of descriptors of each domain, that {@link EnvoyRateLimits}
 * matches requests against: every key checked, every error naming the file, the line and the setting. Stateless.
 */
final class EnvoyRateLimitFiles {

    private static final Set<String> FILE = Set.of("domain", "descriptors");
    private static final Set<String> DESCRIPTOR =
            Set.of("key", "value", "rate_limit", "shadow_mode", "detailed_metric", "descriptors", "tollgate_policy");
    private static final Set<String> RATE_LIMIT =
            Set.of("unit", "requests_per_unit", "name", "unlimited", "replaces", "tollgate_capacity");
    private static final Set<String> REPLACES = Set.of("name");
    /** The units of a {@code rate_limit}, as envoyproxy/ratelimit names them. */
    static final Map<String, Duration> UNITS = Map.of(
            "second", Duration.ofSeconds(1),
            "minute", Duration.ofMinutes(1),
            "hour", Duration.ofHours(1),
            "day", Duration.ofDays(1),
            "week", Duration.ofDays(7),
            "month", Duration.ofDays(30),
            "year", Duration.ofDays(365));

    private EnvoyRateLimitFiles() {}

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
    static Map<String, Level> load(Path fileOrDirectory, Map<String, Policy> policies, boolean mergeDomains) {
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
        return domains;
    }

    /**
     * Reads the text of one file named {@code fileName} (for messages).
     *
     * @throws IllegalArgumentException if it is invalid, naming the file, the line and the setting
     */
    static Map<String, Level> parse(String text, String fileName, Map<String, Policy> policies) {
        Map<String, Level> domains = new LinkedHashMap<>();
        parse(text, fileName, policies, domains, false);
        return domains;
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
                    RuleSections.policy(policyNode, policies), 0, null, null, false, shadow, Set.of(), detailed, where);
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
}
