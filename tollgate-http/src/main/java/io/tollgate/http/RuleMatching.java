package io.tollgate.http;

import io.tollgate.LimiterArguments;
import io.tollgate.Policy;
import io.tollgate.Priority;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

    /** The overload protection every request is admitted by first, or null. */
    private final OverloadProtection overload;

    private final Map<String, Priority> priorities;
    /** The answers to a request refused by overload protection, by priority ordinal. */
    private final RequestDecision[] overloaded;

    RuleMatching(
            List<Rule> rules,
            ClientIpResolver clientIps,
            RequestMetrics metrics,
            RuleChecks checks,
            OverloadProtection overload,
            Map<String, Priority> priorities) {
        this.rules = rules;
        this.clientIps = clientIps;
        this.metrics = metrics;
        this.checks = checks;
        this.holdsSlots = rules.stream().anyMatch(rule -> rule.inFlight() != null);
        this.overload = overload;
        this.priorities = priorities;
        this.overloaded = new RequestDecision[Priority.values().length];
        if (overload != null) {
            long retryAfter = Math.max(1, (overload.settings().retryAfter().toMillis() + 999) / 1000);
            for (Priority priority : Priority.values()) {
                overloaded[priority.ordinal()] = DecisionAnswers.overloaded(retryAfter, priority);
            }
        }
    }

    /** See {@link RequestLimiter#decide}. */
    CompletionStage<RequestDecision> decide(HttpRequestView request) {
        List<Rule> applied = new ArrayList<>(rules.size());
        List<Policy> policies = new ArrayList<>(rules.size());
        List<String> keys = new ArrayList<>(rules.size());
        Priority priority = null;
        for (Rule rule : rules) {
            if (!rule.matches(request)) {
                continue;
            }
            ClientKey clientKey = rule.key();
            String ambiguity = clientKey.ambiguity(request);
            if (ambiguity != null) {
                return CompletableFuture.completedFuture(RequestDecision.problem(400, ambiguity));
            }
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
            keys.add(LimiterArguments.boundedKey(key));
            if (overload != null) { // without protection, no request needs a priority: nothing to look up
                priority = higher(priority, priority(rule, policy));
            }
        }
        if (overload == null) {
            return applied.isEmpty()
                    ? CompletableFuture.completedFuture(RequestDecision.unlimited())
                    : checks.check(applied, policies, keys, holdsSlots);
        }
        Priority admitted = priority == null ? Priority.DEFAULT : priority;
        return overload.enter(admitted).thenCompose(slot -> {
            metrics.overload(admitted, slot == null);
            if (slot == null) {
                return CompletableFuture.completedFuture(overloaded[admitted.ordinal()]);
            }
            CompletionStage<RequestDecision> decided = applied.isEmpty()
                    ? CompletableFuture.completedFuture(RequestDecision.unlimited())
                    : checks.check(applied, policies, keys, holdsSlots);
            return decided.whenComplete((decision, failure) -> {
                        if (failure != null || !decision.allowed()) {
                            slot.abandon(); // refused here: it never reaches the service
                        }
                    })
                    .thenApply(decision -> {
                        if (!decision.allowed()) {
                            return decision;
                        }
                        slot.begin();
                        return decision.holding(slot);
                    });
        });
    }

    /**
     * Returns the priority of a rule's requests: the rule's own, else that of the policy charged (a client's plan),
     * else null.
     */
    private Priority priority(Rule rule, Policy policy) {
        if (rule.priority() != null) {
            return rule.priority();
        }
        return policy == null ? null : priorities.get(policy.name());
    }

    /** Returns the higher of two priorities, either of which may be null. */
    private static Priority higher(Priority one, Priority other) {
        if (one == null) {
            return other;
        }
        return other == null || one.ordinal() <= other.ordinal() ? one : other;
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
