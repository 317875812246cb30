package io.tollgate.http;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.Policy;
import io.tollgate.Priority;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** Reads one rule of a {@code rules} section, checking each key. Stateless and thread-safe. */
final class RuleSection {

    private RuleSection() {}

    /**
     * Reads one rule as an element of the {@code rules} section has it: {@code policy} (one of {@code
     * policies}, required), {@code path}, {@code path-case}, {@code methods}, {@code host}, {@code require-header}, {@code key},
     * {@code cost}, {@code on-missing-key} and {@code dry-run}.
     *
     * @throws ConfigException if the rule is invalid, naming the setting
     */
    static Rule read(ConfigNode node, Map<String, Policy> policies) {
        return read(node, policies, Map.of());
    }

    /**
     * Reads one rule as {@link #read(ConfigNode, Map)} does, which may also name one of {@code
     * concurrencyLimits} in {@code concurrency-limit}, with or without a {@code policy}.
     *
     * @throws ConfigException if the rule is invalid, naming the setting
     */
    static Rule read(ConfigNode node, Map<String, Policy> policies, Map<String, ConcurrencyLimit> concurrencyLimits) {
        node.checkKeys(ConfigSchema.RULE);
        ConfigNode policyNode = node.child("policy");
        ConfigNode limitNode = node.child("concurrency-limit");
        ConcurrencyLimit inFlight = null;
        if (limitNode.isPresent()) {
            inFlight = concurrencyLimits.get(limitNode.requiredString());
            if (inFlight == null) {
                throw limitNode.error("unknown concurrency limit '" + limitNode.string(null) + "'; defined: "
                        + (concurrencyLimits.isEmpty() ? "none" : String.join(", ", concurrencyLimits.keySet())));
            }
        }
        if (!policyNode.isPresent() && inFlight == null) {
            throw policyNode.error("is required, unless the rule names a concurrency-limit");
        }
        Rule.Builder rule = policyNode.isPresent()
                ? Rule.builder(ConfigSections.policy(policyNode, policies))
                : Rule.builder(inFlight);
        if (inFlight != null) {
            rule.inFlight(inFlight);
        }
        ConfigNode current = node;
        try {
            current = node.child("path");
            rule.path(current.string("/**"));
            current = node.child("path-case");
            String pathCase = current.string("ignore").toLowerCase(Locale.ROOT);
            if (!pathCase.equals("ignore") && !pathCase.equals("exact")) {
                throw current.error("must be ignore or exact, was '" + current.string(null) + "'");
            }
            rule.exactPathCase(pathCase.equals("exact"));
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
            current = node.child("priority");
            if (current.isPresent()) {
                rule.priority(Priority.of(current.requiredString()));
            }
            current = node.child("policy-from");
            if (current.isPresent()) {
                rule.policyFrom(policySource(current, policies), policies);
            }
            for (Map.Entry<String, ConfigNode> override :
                    node.child("overrides").entries().entrySet()) {
                current = override.getValue();
                rule.override(override.getKey(), ConfigSections.policy(current, policies));
            }
            current = node.child("allow");
            rule.allow(current.strings());
            current = node.child("deny");
            rule.deny(current.strings());
            current = node.child("response-cost");
            if (current.isPresent()) {
                rule.responseCost(responseCost(current));
            }
            current = node.child("cost");
            rule.cost(current.longValue(1));
            return rule.build();
        } catch (IllegalArgumentException e) {
            throw current.error(e);
        }
    }

    /** Reads a rule's {@code response-cost}: {@code header}, and {@code charge-statuses} or {@code refund-statuses}. */
    private static ResponseCost responseCost(ConfigNode node) {
        node.checkKeys(ConfigSchema.RESPONSE_COST);
        ConfigNode header = node.child("header");
        ConfigNode charged = node.child("charge-statuses");
        ConfigNode refunded = node.child("refund-statuses");
        if (!header.isPresent() && !charged.isPresent() && !refunded.isPresent()) {
            throw node.error("needs header, charge-statuses or refund-statuses");
        }
        ConfigNode current = header;
        try {
            ResponseCost cost =
                    header.isPresent() ? ResponseCost.fromHeader(header.requiredString()) : ResponseCost.none();
            current = charged;
            if (charged.isPresent()) {
                cost = cost.chargingOnly(charged.strings().toArray(String[]::new));
            }
            current = refunded;
            if (refunded.isPresent()) {
                cost = cost.refunding(refunded.strings().toArray(String[]::new));
            }
            return cost;
        } catch (IllegalArgumentException e) {
            throw current.error(e);
        }
    }

    /** Reads a rule's {@code policy-from}: exactly one of its sources. */
    private static PolicySource policySource(ConfigNode node, Map<String, Policy> policies) {
        node.checkKeys(ConfigSchema.POLICY_FROM);
        Map<String, ConfigNode> given = node.entries();
        if (given.size() != 1) {
            throw node.error("needs exactly one of header, jwt-claim, api-keys or api-keys-file");
        }
        Map.Entry<String, ConfigNode> source = given.entrySet().iterator().next();
        ConfigNode value = source.getValue();
        try {
            return switch (source.getKey()) {
                case "header" -> PolicySource.header(value.requiredString());
                case "jwt-claim" -> PolicySource.jwtClaim(value.requiredString());
                case "api-keys" -> {
                    Map<String, String> plans = new LinkedHashMap<>();
                    for (Map.Entry<String, ConfigNode> entry : value.entries().entrySet()) {
                        plans.put(
                                entry.getKey(),
                                ConfigSections.policy(entry.getValue(), policies)
                                        .name());
                    }
                    yield PolicySource.keyTable(plans);
                }
                default -> PolicySource.keyTableFile(Path.of(value.requiredString()));
            };
        } catch (IllegalArgumentException e) {
            throw value.error(e);
        }
    }
}
