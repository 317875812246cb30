package io.tollgate.http;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.Policy;
import io.tollgate.Priority;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * What a rules file and the server's file both say about limiting requests ({@link ConfigSchema#RULES}), read in one
 * order (policies, concurrency limits, rules, client IPs, responses, paths, overload), so that every file that holds them
 * reads them alike: {@link RequestLimiterConfig} for a rules file, and a file of one's own that holds them beside
 * other sections.
 *
 * @param policies the policies by name, in the order the file defines them
 * @param concurrencyLimits the concurrency limits by name
 * @param rules the rules, in order
 * @param clientIps how the client IP is found
 * @param responses what the {@code responses} and {@code paths} sections and the policies' priorities do to a
 *     request limiter's builder
 * @param overload the settings of overload protection, or null where it is not enabled
 */
public record RuleSections(
        Map<String, Policy> policies,
        Map<String, ConcurrencyLimit> concurrencyLimits,
        List<Rule> rules,
        ClientIpResolver clientIps,
        UnaryOperator<RequestLimiter.Builder> responses,
        OverloadProtection.Settings overload) {

    /**
     * Reads the sections under {@code root}; the caller checks which other keys {@code root} may hold.
     *
     * @throws ConfigException if a setting is invalid, naming it
     */
    public static RuleSections read(ConfigNode root) {
        Map<String, Policy> policies = ConfigSections.policies(root.child("policies"));
        Map<String, ConcurrencyLimit> concurrencyLimits =
                ConfigSections.concurrencyLimits(root.child("concurrency-limits"));
        List<Rule> rules = new ArrayList<>();
        for (ConfigNode rule : root.child("rules").elements()) {
            rules.add(RuleSection.read(rule, policies, concurrencyLimits));
        }
        Map<String, Priority> priorities = ConfigSections.policyPriorities(root.child("policies"));
        UnaryOperator<RequestLimiter.Builder> responses = ConfigSections.responses(root.child("responses"));
        PathSettings paths = ConfigSections.paths(root.child("paths"));
        return new RuleSections(
                policies,
                concurrencyLimits,
                List.copyOf(rules),
                ConfigSections.clientIps(root.child("client-ip")),
                builder -> {
                    priorities.forEach(builder::priority);
                    return responses.apply(builder).paths(paths);
                },
                ConfigSections.overload(root.child("overload")));
    }

    /**
     * Reads a reference to a policy of {@code policies} by its name, as a rule's {@code policy} is read: for a file
     * beside a rules file that names its policies (such as Envoy's rate limit files).
     *
     * @throws ConfigException if the value is not the name of one of {@code policies}, naming them
     */
    public static Policy policy(ConfigNode node, Map<String, Policy> policies) {
        return ConfigSections.policy(node, policies);
    }
}
