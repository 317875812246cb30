package io.tollgate.http.internal;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.Policy;
import io.tollgate.Priority;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.http.ClientIpResolver;
import io.tollgate.http.OverloadProtection;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * What a rules file and the server's file both say about limiting requests, read once by {@link ConfigSections}
 * in one order (policies, concurrency limits, rules, client IPs, responses, overload), so that the two read them alike.
 *
 * @param policies the policies by name, in the order the file defines them
 * @param concurrencyLimits the concurrency limits by name
 * @param rules the rules, in order
 * @param clientIps how the client IP is found
 * @param responses what the {@code responses} section and the policies' priorities do to a request limiter's
 *     builder
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
            rules.add(ConfigSections.rule(rule, policies, concurrencyLimits));
        }
        Map<String, Priority> priorities = ConfigSections.policyPriorities(root.child("policies"));
        UnaryOperator<RequestLimiter.Builder> responses = ConfigSections.responses(root.child("responses"));
        return new RuleSections(
                policies,
                concurrencyLimits,
                List.copyOf(rules),
                ConfigSections.clientIps(root.child("client-ip")),
                builder -> {
                    priorities.forEach(builder::priority);
                    return responses.apply(builder);
                },
                ConfigSections.overload(root.child("overload")));
    }
}
