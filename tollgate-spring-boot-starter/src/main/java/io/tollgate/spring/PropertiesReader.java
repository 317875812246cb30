package io.tollgate.spring;

import io.tollgate.http.RequestLimiterConfig;
import io.tollgate.http.internal.ConfigNode;
import io.tollgate.http.internal.ConfigSections;
import io.tollgate.internal.RedisSettings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

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
            List<Object> quotas = new ArrayList<>();
            for (TollgateProperties.Quota quota : policy.getQuotas()) {
                Map<String, Object> settings = new LinkedHashMap<>();
                put(settings, "count", quota.getCount());
                put(settings, "period", quota.getPeriod());
                put(settings, "zone", quota.getZone());
                quotas.add(settings);
            }
            policies.put(
                    name, quotas.isEmpty() ? Map.of("limits", limits) : Map.of("limits", limits, "quotas", quotas));
        });
        tree.put("policies", policies);
        Map<String, Object> concurrencyLimits = new LinkedHashMap<>();
        properties.getConcurrencyLimits().forEach((name, limit) -> {
            Map<String, Object> settings = new LinkedHashMap<>();
            put(settings, "max-in-flight", limit.getMaxInFlight());
            put(settings, "lease", limit.getLease());
            concurrencyLimits.put(name, settings);
        });
        tree.put("concurrency-limits", concurrencyLimits);
        List<Object> rules = new ArrayList<>();
        for (TollgateProperties.Rule rule : properties.getRules()) {
            Map<String, Object> settings = new LinkedHashMap<>();
            put(settings, "path", rule.getPath());
            put(settings, "methods", rule.getMethods());
            put(settings, "host", rule.getHost());
            put(settings, "require-header", rule.getRequireHeader());
            put(settings, "policy", rule.getPolicy());
            put(settings, "concurrency-limit", rule.getConcurrencyLimit());
            put(settings, "key", rule.getKey());
            put(settings, "cost", rule.getCost());
            put(settings, "on-missing-key", rule.getOnMissingKey());
            put(settings, "dry-run", rule.isDryRun());
            TollgateProperties.PolicyFrom from = rule.getPolicyFrom();
            Map<String, Object> source = new LinkedHashMap<>();
            put(source, "header", from.getHeader());
            put(source, "jwt-claim", from.getJwtClaim());
            if (!from.getApiKeys().isEmpty()) {
                source.put("api-keys", from.getApiKeys());
            }
            put(source, "api-keys-file", from.getApiKeysFile());
            if (!source.isEmpty()) {
                settings.put("policy-from", source);
            }
            if (!rule.getOverrides().isEmpty()) {
                settings.put("overrides", rule.getOverrides());
            }
            if (!rule.getAllow().isEmpty()) {
                settings.put("allow", rule.getAllow());
            }
            if (!rule.getDeny().isEmpty()) {
                settings.put("deny", rule.getDeny());
            }
            TollgateProperties.ResponseCost responseCost = rule.getResponseCost();
            Map<String, Object> settled = new LinkedHashMap<>();
            put(settled, "header", responseCost.getHeader());
            if (!responseCost.getChargeStatuses().isEmpty()) {
                settled.put("charge-statuses", responseCost.getChargeStatuses());
            }
            if (!responseCost.getRefundStatuses().isEmpty()) {
                settled.put("refund-statuses", responseCost.getRefundStatuses());
            }
            if (!settled.isEmpty()) {
                settings.put("response-cost", settled);
            }
            rules.add(settings);
        }
        tree.put("rules", rules);
        TollgateProperties.ClientIp clientIp = properties.getClientIp();
        Map<String, Object> ips = new LinkedHashMap<>();
        put(ips, "trusted-proxies", clientIp.getTrustedProxies());
        put(ips, "forwarding-header", clientIp.getForwardingHeader());
        put(ips, "group-ipv6-by-64", clientIp.isGroupIpv6By64());
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

    /**
     * Reads {@code tollgate.redis.*} (but {@code use-application-redis}, the starter's own) as the server
     * reads its {@code redis} section.
     *
     * @throws InvalidTollgatePropertiesException if a value is invalid, naming its property
     */
    static RedisSettings redis(TollgateProperties properties) {
        TollgateProperties.Redis redis = properties.getRedis();
        Map<String, Object> settings = new LinkedHashMap<>();
        put(settings, "uri", redis.getUri());
        if (!redis.getClusterUris().isEmpty()) {
            settings.put("cluster-uris", redis.getClusterUris());
        }
        put(settings, "timeout", redis.getTimeout());
        put(settings, "key-prefix", redis.getKeyPrefix());
        put(
                settings,
                "failure-policy",
                redis.getFailurePolicy() == null
                        ? null
                        : redis.getFailurePolicy().name());
        put(settings, "expected-instances", redis.getExpectedInstances());
        put(settings, "batching", redis.isBatching());
        put(settings, "require-redis-at-start", redis.isRequireRedisAtStart());
        put(settings, "deny-cache-max-age", redis.getDenyCacheMaxAge());
        return section("redis", settings, ConfigSections::redis);
    }

    /**
     * Reads {@code tollgate.memory.*} as the server reads its {@code memory} section: the most keys held.
     *
     * @throws InvalidTollgatePropertiesException if a value is invalid, naming its property
     */
    static long maximumKeys(TollgateProperties properties) {
        return section(
                "memory", Map.of("maximum-keys", properties.getMemory().getMaximumKeys()), ConfigSections::maximumKeys);
    }

    private static <T> T section(String name, Map<String, Object> settings, Function<ConfigNode, T> reader) {
        try {
            return reader.apply(ConfigNode.of(Map.of(name, settings)).child(name));
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
