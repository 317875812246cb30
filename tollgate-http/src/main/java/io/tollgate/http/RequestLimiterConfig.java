package io.tollgate.http;

import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
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
 *     priority: default      # critical, default or sheddable, when the service is overloaded
 * overload:                  # protecting the service: see docs/load-shedding.md
 *   enabled: false
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

    private final List<Policy> policies;
    private final List<Rule> rules;
    private final ClientIpResolver clientIps;
    private final UnaryOperator<RequestLimiter.Builder> responses;
    private final OverloadProtection overload;

    private RequestLimiterConfig(
            List<Policy> policies,
            List<Rule> rules,
            ClientIpResolver clientIps,
            UnaryOperator<RequestLimiter.Builder> responses,
            OverloadProtection.Settings overload) {
        this.policies = List.copyOf(policies);
        this.rules = List.copyOf(rules);
        this.clientIps = clientIps;
        this.responses = responses;
        this.overload = overload == null ? null : new OverloadProtection(overload);
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
                return read(YamlConfig.parse(text));
            }
            if (name.endsWith(".properties")) {
                Properties properties = new Properties();
                properties.load(new StringReader(text));
                return read(ConfigNode.of(PropertiesTree.fromProperties(
                        properties, Map.of("policies", String.join(",", ConfigSchema.POLICY.keys())))));
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
        root.checkKeys(ConfigSchema.RULES);
        RuleSections sections = RuleSections.read(root);
        return new RequestLimiterConfig(
                List.copyOf(sections.policies().values()),
                sections.rules(),
                sections.clientIps(),
                sections.responses(),
                sections.overload());
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
     * Returns the overload protection that {@code overload.enabled: true} asks for, one per configuration read and
     * given to every request limiter built from it; null if it is not enabled. A surface that reads the
     * configuration again keeps its earlier protection where the settings are the same ({@link
     * RequestLimiter.Builder#overload}), so that what it learnt and the requests in flight carry over.
     */
    public OverloadProtection overload() {
        return overload;
    }

    /**
     * Returns a builder for a request limiter with these rules and settings, enforcing with {@code
     * limiter}; more rules may be added to it.
     */
    public RequestLimiter.Builder toBuilder(RateLimiter limiter) {
        RequestLimiter.Builder builder =
                responses.apply(RequestLimiter.builder(limiter).rules(rules).clientIps(clientIps));
        return overload == null ? builder : builder.overload(overload);
    }

    /** Returns a request limiter with these rules and settings, enforcing with {@code limiter}. */
    public RequestLimiter newRequestLimiter(RateLimiter limiter) {
        return toBuilder(limiter).build();
    }
}
