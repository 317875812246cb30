package io.tollgate.http;

import io.tollgate.CalendarQuota;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Priority;
import io.tollgate.Rate;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Reads the sections that every configuration surface shares ({@code policies}, a rule of {@code rules},
 * {@code client-ip} and {@code responses}) from a {@link ConfigNode}, checking each key, so that a rules file
 * and the server's file say the same thing the same way.
 *
 * <p>Stateless and thread-safe.
 */
final class ConfigSections {

    private ConfigSections() {}

    /**
     * Reads the {@code responses} section ({@code refusal-status}, {@code unavailable-status}, {@code
     * problem-type}, {@code legacy-headers}, {@code degraded-header}; each optional) and returns what it does
     * to a request limiter's builder.
     *
     * @throws ConfigException if a setting is invalid, naming it
     */
    static UnaryOperator<RequestLimiter.Builder> responses(ConfigNode responses) {
        responses.checkKeys(ConfigSchema.RESPONSES);
        int refusalStatus = status(responses.child("refusal-status"), RequestLimiter.DEFAULT_REFUSAL_STATUS);
        int unavailableStatus =
                status(responses.child("unavailable-status"), RequestLimiter.DEFAULT_UNAVAILABLE_STATUS);
        ConfigNode problemTypeNode = responses.child("problem-type");
        String problemType = problemTypeNode.string(RequestLimiter.DEFAULT_PROBLEM_TYPE);
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

    /**
     * Reads a map of named policies, each with a list of {@code limits} of {@code capacity} and {@code
     * refill}, as the {@code policies} section of a file has them; an absent node has none.
     *
     * @throws ConfigException if a policy or limit is invalid, naming it
     */
    static Map<String, Policy> policies(ConfigNode policiesNode) {
        Map<String, Policy> policies = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigNode> entry : policiesNode.entries().entrySet()) {
            ConfigNode policy = entry.getValue();
            policy.checkKeys(ConfigSchema.POLICY);
            ConfigNode limitsNode = policy.child("limits");
            if (!limitsNode.isPresent()) {
                throw limitsNode.error("is required: a list of limits, each with capacity and refill");
            }
            List<Limit> limits = new ArrayList<>();
            for (ConfigNode limit : limitsNode.elements()) {
                limit.checkKeys(ConfigSchema.LIMIT);
                long capacity = limit.child("capacity").requiredLong();
                Rate refill = rate(limit.child("refill"));
                try {
                    limits.add(Limit.of(capacity, refill));
                } catch (IllegalArgumentException e) {
                    throw limit.error(e);
                }
            }
            List<CalendarQuota> quotas = new ArrayList<>();
            for (ConfigNode quota : policy.child("quotas").elements()) {
                quotas.add(quota(quota));
            }
            ConfigNode maxDebt = policy.child("max-debt");
            try {
                policies.put(
                        entry.getKey(), new Policy(entry.getKey(), limits, quotas, maxDebt.durationFromZero(null)));
            } catch (IllegalArgumentException e) {
                throw policy.error(e);
            }
        }
        return policies;
    }

    /**
     * Reads the {@code priority} of each policy that has one (a client's plan: {@code critical}, {@code default} or
     * {@code sheddable}), by policy name.
     *
     * @throws ConfigException if a priority is none of those, naming it
     */
    static Map<String, Priority> policyPriorities(ConfigNode policiesNode) {
        Map<String, Priority> priorities = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigNode> entry : policiesNode.entries().entrySet()) {
            ConfigNode priority = entry.getValue().child("priority");
            if (priority.isPresent()) {
                try {
                    priorities.put(entry.getKey(), Priority.of(priority.requiredString()));
                } catch (IllegalArgumentException e) {
                    throw priority.error(e);
                }
            }
        }
        return priorities;
    }

    /**
     * Reads the {@code overload} section: unless {@code enabled} is true, null (no protection, and no other key may
     * be set); else the settings, each key defaulting to {@link OverloadProtection.Settings#defaults()}.
     *
     * @throws ConfigException if a setting is invalid, naming it
     */
    static OverloadProtection.Settings overload(ConfigNode node) {
        node.checkKeys(ConfigSchema.OVERLOAD);
        ConfigNode enabled = node.child("enabled");
        if (!enabled.bool(false)) {
            for (String key : ConfigSchema.OVERLOAD.keys()) {
                if (!key.equals("enabled") && node.child(key).isPresent()) {
                    throw node.child(key).error("applies only with overload.enabled: true");
                }
            }
            return null;
        }
        OverloadProtection.Settings defaults = OverloadProtection.Settings.defaults();
        ConfigNode current = node;
        try {
            current = node.child("min-limit");
            int min = (int) bounded(current, defaults.minLimit());
            current = node.child("initial-limit");
            int initial = (int) bounded(current, Math.max(min, defaults.initialLimit()));
            current = node.child("max-limit");
            int max = (int) bounded(current, Math.max(initial, defaults.maxLimit()));
            current = node.child("critical-reserve");
            double criticalReserve = fraction(current, defaults.criticalReserve());
            current = node.child("default-reserve");
            double defaultReserve = fraction(current, defaults.defaultReserve());
            current = node.child("max-wait");
            Duration maxWait = zeroOrDuration(current, defaults.maxWait());
            current = node.child("retry-after");
            Duration retryAfter = current.duration(defaults.retryAfter());
            current = node;
            return new OverloadProtection.Settings(
                    min, initial, max, criticalReserve, defaultReserve, maxWait, retryAfter);
        } catch (IllegalArgumentException e) {
            throw current.error(e);
        }
    }

    private static long bounded(ConfigNode node, long defaultValue) {
        long value = node.longValue(defaultValue);
        if (value < 1 || value > 1_000_000) {
            throw node.error("must be 1 to 1000000, was " + value);
        }
        return value;
    }

    /** Reads a share from 0 to 1, such as {@code 0.1}. */
    private static double fraction(ConfigNode node, double defaultValue) {
        String text = node.string(null);
        if (text == null) {
            return defaultValue;
        }
        double value;
        try {
            value = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw node.error("must be a share from 0 to 1, such as 0.1, was '" + text + "'");
        }
        if (!(value >= 0 && value <= 1)) {
            throw node.error("must be a share from 0 to 1, such as 0.1, was " + text);
        }
        return value;
    }

    /** Reads a duration that may be zero: {@code 0}, {@code 0ms} (or zero as a framework bound it). */
    private static Duration zeroOrDuration(ConfigNode node, Duration defaultValue) {
        String text = node.string(null);
        if (text != null && (text.matches("0+(us|ms|s|m|h|d)?") || text.equals("PT0S"))) {
            return Duration.ZERO;
        }
        return node.duration(defaultValue);
    }

    /** Reads one calendar quota: {@code count} and {@code period} (required), {@code zone} (default UTC). */
    private static CalendarQuota quota(ConfigNode node) {
        node.checkKeys(ConfigSchema.QUOTA);
        ConfigNode count = node.child("count");
        long tokens = count.requiredLong();
        ConfigNode period = node.child("period");
        CalendarQuota.Period each;
        try {
            each = CalendarQuota.Period.parse(period.requiredString());
        } catch (IllegalArgumentException e) {
            throw period.error(e);
        }
        ConfigNode zone = node.child("zone");
        ZoneId zoneId;
        try {
            zoneId = ZoneId.of(zone.string("UTC"));
        } catch (DateTimeException e) {
            throw zone.error("unknown time zone '" + zone.string(null) + "': use a name such as Europe/Paris or UTC");
        }
        try {
            return CalendarQuota.of(tokens, each, zoneId);
        } catch (IllegalArgumentException e) {
            throw count.error(e);
        }
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
     * Reads the {@code concurrency-limits} section: by name, {@code max-in-flight} (required) and {@code lease}
     * (default 30 s); an absent node has none.
     *
     * @throws ConfigException if a limit is invalid, naming it
     */
    static Map<String, ConcurrencyLimit> concurrencyLimits(ConfigNode node) {
        Map<String, ConcurrencyLimit> limits = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigNode> entry : node.entries().entrySet()) {
            ConfigNode limit = entry.getValue();
            limit.checkKeys(ConfigSchema.CONCURRENCY_LIMIT);
            ConfigNode max = limit.child("max-in-flight");
            long maxInFlight = max.requiredLong();
            if (maxInFlight < 1 || maxInFlight > ConcurrencyLimit.MAX_IN_FLIGHT) {
                throw max.error("must be 1 to " + ConcurrencyLimit.MAX_IN_FLIGHT + ", was " + maxInFlight);
            }
            ConfigNode lease = limit.child("lease");
            try {
                limits.put(
                        entry.getKey(),
                        new ConcurrencyLimit(
                                entry.getKey(), (int) maxInFlight, lease.duration(ConcurrencyLimit.DEFAULT_LEASE)));
            } catch (IllegalArgumentException e) {
                throw (lease.isPresent() ? lease : limit).error(e);
            }
        }
        return limits;
    }

    /**
     * Reads a policy name that must be one of {@code policies}.
     *
     * @throws ConfigException if it names none of them, naming those defined
     */
    static Policy policy(ConfigNode node, Map<String, Policy> policies) {
        Policy policy = policies.get(node.requiredString());
        if (policy == null) {
            throw node.error("unknown policy '" + node.string(null) + "'; defined: "
                    + (policies.isEmpty() ? "none" : String.join(", ", policies.keySet())));
        }
        return policy;
    }

    static ClientIpResolver clientIps(ConfigNode node) {
        node.checkKeys(ConfigSchema.CLIENT_IP);
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
        clientIps.groupIpv6By64(node.child("group-ipv6-by-64").bool(true));
        return clientIps.build();
    }

    /**
     * Reads the {@code paths} section: {@code merge-slashes} (default true), {@code backslash} ({@code refuse} or
     * {@code slash}), {@code encoded-slash} ({@code refuse} or {@code keep}) and {@code parameters} ({@code drop} or
     * {@code keep}).
     *
     * @throws ConfigException if a setting is invalid, naming it
     */
    static PathSettings paths(ConfigNode node) {
        node.checkKeys(ConfigSchema.PATHS);
        boolean merge = node.child("merge-slashes").bool(true);
        ConfigNode backslashNode = node.child("backslash");
        PathSettings.Backslash backslash =
                switch (backslashNode.string("refuse").toLowerCase(Locale.ROOT)) {
                    case "refuse" -> PathSettings.Backslash.REFUSE;
                    case "slash" -> PathSettings.Backslash.SLASH;
                    default ->
                        throw backslashNode.error("must be refuse or slash, was '" + backslashNode.string(null) + "'");
                };
        ConfigNode encodedSlashNode = node.child("encoded-slash");
        PathSettings.EncodedSlash encodedSlash =
                switch (encodedSlashNode.string("refuse").toLowerCase(Locale.ROOT)) {
                    case "refuse" -> PathSettings.EncodedSlash.REFUSE;
                    case "keep" -> PathSettings.EncodedSlash.KEEP;
                    default ->
                        throw encodedSlashNode.error(
                                "must be refuse or keep, was '" + encodedSlashNode.string(null) + "'");
                };
        ConfigNode parametersNode = node.child("parameters");
        PathSettings.Parameters parameters =
                switch (parametersNode.string("drop").toLowerCase(Locale.ROOT)) {
                    case "drop" -> PathSettings.Parameters.DROP;
                    case "keep" -> PathSettings.Parameters.KEEP;
                    default ->
                        throw parametersNode.error("must be drop or keep, was '" + parametersNode.string(null) + "'");
                };
        return new PathSettings(merge, backslash, encodedSlash, parameters);
    }
}
