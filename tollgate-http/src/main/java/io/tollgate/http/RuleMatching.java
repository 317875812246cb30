package io.tollgate.http;

import io.tollgate.Policy;
import io.tollgate.internal.Arguments;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Finds the rules that apply to a request and what each charges: the rule matches the request, its client key
 * is found (or the request is answered as {@link MissingKey} says), the client is not on an allow or deny list
 * of its {@link PolicyChoice}, and its policy is the one the choice gives for the client. Then hands them to
 * {@link RuleChecks}.
 *
 * <p>Immutable and thread-safe.
 */
final class RuleMatching {

    private static final RequestDecision DENIED = RequestDecision.problem(403, RequestLimiter.DENIED_DETAIL);

    private final List<Rule> rules;
    private final ClientIpResolver clientIps;
    private final RequestMetrics metrics;
    private final RuleChecks checks;
    /** Whether a rule takes slots of a concurrency limit: only then can a failed check leave one behind. */
    private final boolean holdsSlots;

    RuleMatching(List<Rule> rules, ClientIpResolver clientIps, RequestMetrics metrics, RuleChecks checks) {
        this.rules = rules;
        this.clientIps = clientIps;
        this.metrics = metrics;
        this.checks = checks;
        this.holdsSlots = rules.stream().anyMatch(rule -> rule.inFlight() != null);
    }

    /** See {@link RequestLimiter#decide}. */
    CompletionStage<RequestDecision> decide(HttpRequestView request) {
        List<Rule> applied = new ArrayList<>(rules.size());
        List<Policy> policies = new ArrayList<>(rules.size());
        List<String> keys = new ArrayList<>(rules.size());
        for (Rule rule : rules) {
            if (!rule.matches(request)) {
                continue;
            }
            ClientKey clientKey = rule.key();
            String key = clientKey.resolve(request, clientIps);
            if (key == null) {
                RequestDecision rejected = missingKey(rule, clientKey.describe());
                if (rejected != null) {
                    return CompletableFuture.completedFuture(rejected);
                }
                if (rule.onMissingKey() instanceof MissingKey.Fallback fallback) {
                    clientKey = fallback.key();
                    key = clientKey.resolve(request, clientIps);
                }
                if (key == null) {
                    continue;
                }
            }
            Policy policy = rule.policy();
            PolicyChoice choice = rule.choice();
            if (!choice.isFixed()) {
                String value = clientKey.value(request, clientIps);
                PolicyChoice.Listing listing = choice.listing(value, request, clientIps);
                if (listing != PolicyChoice.Listing.NONE) {
                    metrics.listed(rule, listing);
                    if (listing == PolicyChoice.Listing.DENIED && !rule.dryRun()) {
                        return CompletableFuture.completedFuture(DENIED);
                    }
                    continue; // an allowed client is not limited; a dry run's denied one is only counted
                }
                if (policy != null) {
                    policy = choice.choose(policy, request, value);
                }
            }
            applied.add(rule);
            policies.add(policy);
            keys.add(Arguments.boundedKey(key));
        }
        if (applied.isEmpty()) {
            return CompletableFuture.completedFuture(RequestDecision.unlimited());
        }
        return checks.check(applied, policies, keys, holdsSlots);
    }

    /** See {@link RequestLimiter#missingKey}. */
    RequestDecision missingKey(Rule rule, String whatIsMissing) {
        metrics.missingKey(rule);
        if (rule.onMissingKey() instanceof MissingKey.Reject reject) {
            return RequestDecision.problem(reject.status(), "This request must carry " + whatIsMissing + ".");
        }
        return null;
    }
}
