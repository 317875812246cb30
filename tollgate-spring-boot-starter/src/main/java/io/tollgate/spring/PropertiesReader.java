package io.tollgate.spring;

import io.tollgate.http.RequestLimiterConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads {@code tollgate.*} as Tollgate's own configuration reader reads a file, so that the starter, the
 * servlet filter and the server check the same values with the same messages; a message names the Spring
 * property, such as {@code tollgate.rules[0].policy: unknown policy 'per-usr'; defined: per-user}.
 */
final class PropertiesReader {

    private PropertiesReader() {}

    /**
     * @throws InvalidTollgatePropertiesException if a value is invalid, naming its property
     */
    static RequestLimiterConfig read(TollgateProperties properties) {
        Map<String, Object> tree = new LinkedHashMap<>();
        Map<String, Object> policies = new LinkedHashMap<>();
        properties.getPolicies().forEach((name, policy) -> {
            List<Object> limits = new ArrayList<>();
            for (TollgateProperties.Limit limit : policy.getLimits()) {
                Map<String, Object> settings = new LinkedHashMap<>();
                put(settings, "capacity", limit.getCapacity());
                put(settings, "refill", limit.getRefill());
                limits.add(settings);
            }
            policies.put(name, Map.of("limits", limits));
        });
        tree.put("policies", policies);
        List<Object> rules = new ArrayList<>();
        for (TollgateProperties.Rule rule : properties.getRules()) {
            Map<String, Object> settings = new LinkedHashMap<>();
            put(settings, "path", rule.getPath());
            put(settings, "methods", rule.getMethods());
            put(settings, "host", rule.getHost());
            put(settings, "require-header", rule.getRequireHeader());
            put(settings, "policy", rule.getPolicy());
            put(settings, "key", rule.getKey());
            put(settings, "cost", rule.getCost());
            put(settings, "on-missing-key", rule.getOnMissingKey());
            put(settings, "dry-run", rule.isDryRun());
            rules.add(settings);
        }
        tree.put("rules", rules);
        TollgateProperties.ClientIp clientIp = properties.getClientIp();
        Map<String, Object> ips = new LinkedHashMap<>();
        put(ips, "trusted-proxies", clientIp.getTrustedProxies());
        put(ips, "forwarding-header", clientIp.getForwardingHeader());
        put(ips, "group-ipv6-by-64", clientIp.isGroupIpv6());
        tree.put("client-ip", ips);
        TollgateProperties.Responses responses = properties.getResponses();
        Map<String, Object> answers = new LinkedHashMap<>();
        put(answers, "refusal-status", responses.getRefusalStatus());
        put(answers, "unavailable-status", responses.getUnavailableStatus());
        put(answers, "problem-type", responses.getProblemType());
        put(answers, "legacy-headers", responses.isLegacyHeaders());
        put(answers, "degraded-header", responses.isDegradedHeader());
        tree.put("responses", answers);
        try {
            return RequestLimiterConfig.fromTree(tree);
        } catch (IllegalArgumentException e) {
            throw new InvalidTollgatePropertiesException("tollgate." + e.getMessage(), e);
        }
    }

    private static void put(Map<String, Object> settings, String key, Object value) {
        if (value != null) {
            settings.put(key, value);
        }
    }
}
