package io.tollgate.http;

import io.tollgate.config.ConfigSection;

/**
 * The keys of the sections that a rules file, the server's file and the Spring Boot starter's {@code tollgate.*}
 * share, written once: files are checked against them ({@link RequestLimiterConfig}, {@link RuleSections}), the
 * server adds its own sections to {@link #RULES}, and the starter reads its properties by them. docs/configuration.md
 * describes every key.
 */
public final class ConfigSchema {

    /** One limit of a policy. */
    public static final ConfigSection LIMIT = ConfigSection.of("limit", "capacity", "refill");

    /** One calendar quota of a policy. */
    public static final ConfigSection QUOTA = ConfigSection.of("quota", "count", "period", "zone");

    /** A policy: its limits and quotas, its priority under overload and its maximum debt. */
    public static final ConfigSection POLICY = ConfigSection.of("policy", "priority", "max-debt")
            .with("limits", LIMIT)
            .with("quotas", QUOTA);

    /** A concurrency limit. */
    public static final ConfigSection CONCURRENCY_LIMIT =
            ConfigSection.of("concurrency limit", "max-in-flight", "lease");

    /** How a rule charges by the response. */
    public static final ConfigSection RESPONSE_COST =
            ConfigSection.of("response cost", "header", "charge-statuses", "refund-statuses");

    /** Where a rule finds each request's policy. */
    public static final ConfigSection POLICY_FROM =
            ConfigSection.of("policy source", "header", "jwt-claim", "api-keys", "api-keys-file");

    /** A rule. */
    public static final ConfigSection RULE = ConfigSection.of(
                    "rule",
                    "path",
                    "methods",
                    "host",
                    "require-header",
                    "policy",
                    "key",
                    "cost",
                    "on-missing-key",
                    "dry-run",
                    "overrides",
                    "allow",
                    "deny",
                    "concurrency-limit",
                    "priority",
                    "path-case")
            .with("policy-from", POLICY_FROM)
            .with("response-cost", RESPONSE_COST);

    /** How the client IP is found. */
    public static final ConfigSection CLIENT_IP =
            ConfigSection.of("client-ip", "trusted-proxies", "forwarding-header", "group-ipv6-by-64");

    /** What responses carry. */
    public static final ConfigSection RESPONSES = ConfigSection.of(
            "responses", "legacy-headers", "degraded-header", "refusal-status", "unavailable-status", "problem-type");

    /** Protecting the service from overload: the learnt limit on requests in flight, the reserves, the wait. */
    public static final ConfigSection OVERLOAD = ConfigSection.of(
            "overload",
            "enabled",
            "min-limit",
            "initial-limit",
            "max-limit",
            "critical-reserve",
            "default-reserve",
            "max-wait",
            "retry-after");

    /** How request paths are read into their normal form. */
    public static final ConfigSection PATHS =
            ConfigSection.of("paths", "merge-slashes", "backslash", "encoded-slash", "parameters");

    /** What a rules file holds, and the part of the server's file that it shares. */
    public static final ConfigSection RULES = ConfigSection.of("rules file")
            .with("policies", POLICY)
            .with("concurrency-limits", CONCURRENCY_LIMIT)
            .with("rules", RULE)
            .with("client-ip", CLIENT_IP)
            .with("responses", RESPONSES)
            .with("overload", OVERLOAD)
            .with("paths", PATHS);

    private ConfigSchema() {}
}
