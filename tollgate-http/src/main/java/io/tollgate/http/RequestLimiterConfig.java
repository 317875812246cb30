package io.tollgate.http;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * The policies, rules and response settings of a {@link RequestLimiter}, read from a YAML or properties
 * file, so that limits can change without a new build.
 *
 * <pre>{@code
 * policies:
 *   per-ip:
 *     limits:                # 1 to 8 limits, all checked together
 *       - capacity: 100
 *         refill: 100/m      # N/s, N/m, N/h, N/d, or "N per 10s"
 * rules:
 *   - path: /api/**          # default /**
 *     methods: [GET, POST]   # default: every method
 *     host: api.example.com  # default: any host
 *     require-header: X-Tenant
 *     policy: per-ip         # required
 *     key: ip                # default ip; see ClientKey#parse
 *     cost: 1
 *     on-missing-key: skip   # see MissingKey#parse
 *     dry-run: false
 * client-ip:
 *   trusted-proxies: [10.0.0.0/8]
 *   forwarding-header: x-forwarded-for   # or forwarded
 *   group-ipv6-by-64: false
 * responses:
 *   legacy-headers: false
 *   degraded-header: false
 *   refusal-status: 429
 *   unavailable-status: 503  # refused because the limiter fails closed
 *   problem-type: about:blank
 * }</pre>
 *
 * <p>A properties file says the same with paths: {@code policies.per-ip.limits[0].capacity=100},
 * {@code rules[0].path=/api/**}, {@code rules[0].methods=GET,POST}. Unknown settings are errors, so a
 * misspelt one does not pass unnoticed; an error names the file, the line (in YAML) and the setting, as in
 * {@code limits.yaml:14: rules[1].cost: must be a whole number, was 'ten'}.
 *
 * <p>Immutable and thread-safe.
 */
public final class RequestLimiterConfig {

    private static final Set<String> TOP = Set.of("policies", "rules", "client-ip", "responses");
    private static final Set<String> POLICY = Set.of("limits");
    private static final Set<String> LIMIT = Set.of("capacity", "refill");
    private static final Set<String> RULE =
            Set.of("path", "methods", "host", "require-header", "policy", "key", "cost", "on-missing-key", "dry-run");
    private static final Set<String> CLIENT_IP = Set.of("trusted-proxies", "forwarding-header", "group-ipv6-by-64");
    private static final Set<String> RESPONSES =
            Set.of("legacy-headers", "degraded-header", "refusal-status", "unavailable-status", "problem-type");

    private final List<Policy> policies;
    private final List<Rule> rules;
    private final ClientIpResolver clientIps;
    private final UnaryOperator<RequestLimiter.Builder> responses;

    private RequestLimiterConfig(
            List<Policy> policies,
            List<Rule> rules,
            ClientIpResolver clientIps,
            UnaryOperator<RequestLimiter.Builder> responses) {
        this.policies = List.copyOf(policies);
        this.rules = List.copyOf(rules);
        this.clientIps = clientIps;
        this.responses = responses;
    }

    /**
     * Reads a file: YAML if its name ends in {@code .yaml} or {@code .yml} (SnakeYAML must be on the class
     * path), properties if it ends in {@code .properties}.
     *
     * @throws IOException if the file cannot be read
     * @throws IllegalArgumentException if the configuration is invalid, naming the file, the line (in YAML)
     *     and the setting
     */
    public static RequestLimiterConfig load(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /**
     * Parses the text of a file named {@code fileName}, whose extension says the format as for {@link
     * #load(Path)}.
     *
     * @throws IllegalArgumentException if the format is unknown or the configuration invalid, naming the
     *     file and the setting
     */
    public static RequestLimiterConfig parse(String text, String fileName) {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(fileName, "fileName");
        String name = fileName.toLowerCase(Locale.ROOT);
        try {
            if (name.endsWith(".yaml") || name.endsWith(".yml")) {
                return read(ConfigNode.parseYaml(text));
            }
            if (name.endsWith(".properties")) {
                Properties properties = new Properties();
                properties.load(new StringReader(text));
                return read(ConfigNode.of(PropertiesTree.fromProperties(properties, Map.of("policies", "limits"))));
            }
        } catch (ConfigException e) {
            throw new IllegalArgumentException(e.messageIn(fileName), e);
        } catch (IllegalArgumentException | IOException e) {
            throw new IllegalArgumentException(fileName + ": " + e.getMessage(), e);
        }
        throw new IllegalArgumentException(
                "cannot tell the format of '" + fileName + "': name it .yaml, .yml or .properties");
    }

    /**
     * Reads configuration already parsed into maps, lists and scalars (strings, numbers, booleans), as a
     * YAML or JSON parser gives it.
     *
     * @throws IllegalArgumentException if the configuration is invalid, naming the setting
     */
    public static RequestLimiterConfig fromTree(Map<String, ?> tree) {
        return read(ConfigNode.of(tree));
    }

    private static RequestLimiterConfig read(ConfigNode root) {
        root.checkKeys(TOP);
        Map<String, Policy> policies = readPolicies(root.child("policies"));
        List<Rule> rules = new ArrayList<>();
        for (ConfigNode rule : root.child("rules").elements()) {
            rules.add(readRule(rule, policies));
        }
        ClientIpResolver clientIps = clientIps(root.child("client-ip"));
        return new RequestLimiterConfig(
                List.copyOf(policies.values()), rules, clientIps, readResponses(root.child("responses")));
    }

    /**
     * Reads the {@code responses} section ({@code refusal-status}, {@code unavailable-status}, {@code
     * problem-type}, {@code legacy-headers}, {@code degraded-header}; each optional) and returns what it does
     * to a request limiter's builder.
     *
     * @throws ConfigException if a setting is invalid, naming it
     */
    public static UnaryOperator<RequestLimiter.Builder> readResponses(ConfigNode responses) {
        responses.checkKeys(RESPONSES);
        int refusalStatus = status(responses.child("refusal-status"), 429);
        int unavailableStatus =
                status(responses.child("unavailable-status"), RequestLimiter.DEFAULT_UNAVAILABLE_STATUS);
        ConfigNode problemTypeNode = responses.child("problem-type");
        String problemType = problemTypeNode.string("about:blank");
        if (problemType.isEmpty()) {
            throw problemTypeNode.error("must be a URI such as about:blank, was empty");
        }
        boolean legacyHeaders = responses.child("legacy-headers").bool(false);
        boolean degradedHeader = responses.child("degraded-header").bool(false);
        return builder -> builder.legacyHeaders(legacyHeaders)
                .degradedHeader(degradedHeader)
                .refusalStatus(refusalStatus)
                .unavailableStatus(unavailableStatus)
                .problemType(problemType);
    }

    private static int status(ConfigNode node, int defaultStatus) {
        long status = node.longValue(defaultStatus);
        if (status < 400 || status > 599) {
            throw node.error("must be a 4xx or 5xx status, was " + status);
        }
        return (int) status;
    }

    /** Returns the policies: in the order a YAML file defines them, by name from a properties file. */
    public List<Policy> policies() {
        return policies;
    }

    /** Returns the rules, in order. */
    public List<Rule> rules() {
        return rules;
    }

    /** Returns how the client IP is found. */
    public ClientIpResolver clientIps() {
        return clientIps;
    }

    /**
     * Returns a builder for a request limiter with these rules and settings, enforcing with {@code
     * limiter}; more rules may be added to it.
     */
    public RequestLimiter.Builder toBuilder(RateLimiter limiter) {
        return responses.apply(RequestLimiter.builder(limiter).rules(rules).clientIps(clientIps));
    }

    /** Returns a request limiter with these rules and settings, enforcing with {@code limiter}. */
    public RequestLimiter newRequestLimiter(RateLimiter limiter) {
        return toBuilder(limiter).build();
    }

    /**
     * Reads a map of named policies, each with a list of {@code limits} of {@code capacity} and {@code
     * refill}, as the {@code policies} section of a file has them; an absent node has none.
     *
     * @throws ConfigException if a policy or limit is invalid, naming it
     */
    public static Map<String, Policy> readPolicies(ConfigNode policiesNode) {
        Map<String, Policy> policies = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigNode> entry : policiesNode.entries().entrySet()) {
            ConfigNode policy = entry.getValue();
            policy.checkKeys(POLICY);
            ConfigNode limitsNode = policy.child("limits");
            if (!limitsNode.isPresent()) {
                throw limitsNode.error("is required: a list of limits, each with capacity and refill");
            }
            List<Limit> limits = new ArrayList<>();
            for (ConfigNode limit : limitsNode.elements()) {
                limit.checkKeys(LIMIT);
                long capacity = limit.child("capacity").requiredLong();
                Rate refill = rate(limit.child("refill"));
                try {
                    limits.add(Limit.of(capacity, refill));
                } catch (IllegalArgumentException e) {
                    throw limit.error(e);
                }
            }
            try {
                policies.put(entry.getKey(), new Policy(entry.getKey(), limits));
            } catch (IllegalArgumentException e) {
                throw policy.error(e);
            }
        }
        return policies;
    }

    private static Rate rate(ConfigNode refill) {
        String text = refill.requiredString();
        try {
            return Rate.parse(text);
        } catch (IllegalArgumentException e) {
            throw refill.error(e);
        }
    }

    /**
     * Reads one rule as an element of the {@code rules} section has it: {@code policy} (one of {@code
     * policies}, required), {@code path}, {@code methods}, {@code host}, {@code require-header}, {@code key},
     * {@code cost}, {@code on-missing-key} and {@code dry-run}.
     *
     * @throws ConfigException if the rule is invalid, naming the setting
     */
    public static Rule readRule(ConfigNode node, Map<String, Policy> policies) {
        node.checkKeys(RULE);
        ConfigNode policyNode = node.child("policy");
        Policy policy = policies.get(policyNode.requiredString());
        if (policy == null) {
            throw policyNode.error("unknown policy '" + policyNode.string(null) + "'; defined: "
                    + (policies.isEmpty() ? "none" : String.join(", ", policies.keySet())));
        }
        Rule.Builder rule = Rule.builder(policy);
        ConfigNode current = node;
        try {
            current = node.child("path");
            rule.path(current.string("/**"));
            current = node.child("methods");
            rule.methods(current.strings().toArray(String[]::new));
            current = node.child("host");
            if (current.isPresent()) {
                rule.host(current.requiredString());
            }
            current = node.child("require-header");
            if (current.isPresent()) {
                rule.requireHeader(current.requiredString());
            }
            current = node.child("key");
            rule.key(ClientKey.parse(current.string("ip")));
            current = node.child("on-missing-key");
            rule.onMissingKey(MissingKey.parse(current.string("skip")));
            current = node.child("dry-run");
            rule.dryRun(current.bool(false));
            current = node.child("cost");
            rule.cost(current.longValue(1));
            return rule.build();
        } catch (IllegalArgumentException e) {
            throw current.error(e);
        }
    }

    private static ClientIpResolver clientIps(ConfigNode node) {
        node.checkKeys(CLIENT_IP);
        ClientIpResolver.Builder clientIps = ClientIpResolver.builder();
        ConfigNode proxies = node.child("trusted-proxies");
        try {
            clientIps.trustedProxies(proxies.strings());
        } catch (IllegalArgumentException e) {
            throw proxies.error(e);
        }
        ConfigNode header = node.child("forwarding-header");
        String headerName = header.string("x-forwarded-for").toLowerCase(Locale.ROOT);
        switch (headerName) {
            case "x-forwarded-for" -> clientIps.forwardingHeader(ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR);
            case "forwarded" -> clientIps.forwardingHeader(ClientIpResolver.ForwardingHeader.FORWARDED);
            default -> throw header.error("must be x-forwarded-for or forwarded, was '" + headerName + "'");
        }
        clientIps.groupIpv6By64(node.child("group-ipv6-by-64").bool(false));
        return clientIps.build();
    }
}
