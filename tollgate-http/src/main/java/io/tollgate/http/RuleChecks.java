package io.tollgate.http;

import io.tollgate.Decision;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Checks the rules a request matched against the limiter, in order, until one refuses: each rule takes a slot
 * of its concurrency limit, if it has one, then charges its policy, if it has one (a request refused for its
 * rate holds no slot; one refused for its slots takes no tokens). Decisions that are ready at once are taken
 * in a loop, so the in-memory limiter costs no future per rule. A request refused, or whose limiter failed
 * midway, keeps no slot.
 *
 * <p>Immutable and thread-safe; each request's progress lives in its own {@link Checks}.
 */
final class RuleChecks {

    private final RateLimiter limiter;
    private final RequestMetrics metrics;
    private final DecisionAnswers answers;

    RuleChecks(RateLimiter limiter, RequestMetrics metrics, DecisionAnswers answers) {
        this.limiter = limiter;
        this.metrics = metrics;
        this.answers = answers;
    }

    /**
     * Checks the rules that apply to one request, with the policy and the (bounded) key each charges.
     *
     * @param holdsSlots whether any rule takes slots of a concurrency limit: only then can a failed check
     *     leave one behind
     */
    CompletionStage<RequestDecision> check(
            List<Rule> rules, List<Policy> policies, List<String> keys, boolean holdsSlots) {
        Checks checks = new Checks(rules, policies, keys);
        CompletionStage<RequestDecision> decided = checkFrom(checks, 0);
        if (!holdsSlots) {
            return decided;
        }
        return decided.whenComplete((decision, failure) -> {
            if (failure != null) {
                checks.releasePermits(); // the limiter failed midway: nothing may keep a slot for this request
            }
        });
    }

    /** The checks of one request: the rules that apply, with their policies and keys, and what they decided. */
    private static final class Checks {

        final List<Rule> rules;
        final List<Policy> policies;
        final List<String> keys;
        final List<RuleOutcome> outcomes;
        List<Permit> permits = List.of(); // most requests hold no slot: no list for them

        Checks(List<Rule> rules, List<Policy> policies, List<String> keys) {
            this.rules = rules;
            this.policies = policies;
            this.keys = keys;
            this.outcomes = new ArrayList<>(rules.size());
        }

        void hold(Permit permit) {
            if (permits.isEmpty()) {
                permits = new ArrayList<>(1);
            }
            permits.add(permit);
        }

        void releasePermits() {
            permits.forEach(Permit::releaseAsync);
            permits = List.of();
        }
    }

    /**
     * Checks the rules from step {@code next} on: each rule's step {@code 2i} takes a slot of its concurrency
     * limit, if it has one, and step {@code 2i+1} charges its policy, if it has one.
     */
    private CompletionStage<RequestDecision> checkFrom(Checks checks, int next) {
        for (int step = next; step < 2 * checks.rules.size(); step++) {
            int index = step / 2;
            Rule rule = checks.rules.get(index);
            String key = checks.keys.get(index);
            int following = step + 1;
            if (step % 2 == 0) {
                if (rule.inFlight() == null) {
                    continue;
                }
                CompletableFuture<Permit> pending =
                        limiter.tryAcquirePermitAsync(key, rule.inFlight()).toCompletableFuture();
                if (!pending.isDone() || pending.isCompletedExceptionally()) {
                    return pending.thenCompose(permit -> holds(checks, rule, permit)
                            ? checkFrom(checks, following)
                            : CompletableFuture.completedFuture(tooManyInFlight(checks, permit)));
                }
                if (!holds(checks, rule, pending.join())) {
                    return CompletableFuture.completedFuture(tooManyInFlight(checks, pending.join()));
                }
                continue;
            }
            Policy policy = checks.policies.get(index);
            if (policy == null) {
                continue;
            }
            CompletableFuture<Decision> pending =
                    limiter.tryAcquireAsync(key, policy, rule.cost()).toCompletableFuture();
            if (!pending.isDone() || pending.isCompletedExceptionally()) {
                return pending.thenCompose(
                        decision -> record(checks.outcomes, new RuleOutcome(rule, policy, key, decision))
                                ? CompletableFuture.completedFuture(refused(checks))
                                : checkFrom(checks, following));
            }
            if (record(checks.outcomes, new RuleOutcome(rule, policy, key, pending.join()))) {
                return CompletableFuture.completedFuture(refused(checks));
            }
        }
        if (checks.outcomes.isEmpty()) {
            return CompletableFuture.completedFuture(
                    new RequestDecision(true, 200, Map.of(), new byte[0], List.of(), checks.permits));
        }
        RequestDecision allowed = answers.respond(checks.outcomes);
        return CompletableFuture.completedFuture(
                checks.permits.isEmpty()
                        ? allowed
                        : new RequestDecision(
                                true,
                                allowed.status(),
                                allowed.headers(),
                                new byte[0],
                                allowed.outcomes(),
                                checks.permits));
    }

    /** Records a permit; returns whether the request may go on: the slot was taken, or the rule only reports. */
    private boolean holds(Checks checks, Rule rule, Permit permit) {
        metrics.permit(rule, permit);
        if (permit.acquired()) {
            checks.hold(permit);
            return true;
        }
        return rule.dryRun();
    }

    /** Returns the answer to a request that a rule refused for its rate, giving back the slots it took. */
    private RequestDecision refused(Checks checks) {
        checks.releasePermits();
        return answers.respond(checks.outcomes);
    }

    /** Returns the answer to a request refused for its requests in flight, giving back the slots it took. */
    private RequestDecision tooManyInFlight(Checks checks, Permit refused) {
        checks.releasePermits();
        return answers.tooManyInFlight(checks.outcomes, refused);
    }

    /** Adds an outcome; returns whether it refuses the request, which ends the check. */
    private boolean record(List<RuleOutcome> outcomes, RuleOutcome outcome) {
        outcomes.add(outcome);
        metrics.decided(outcome);
        return outcome.refuses();
    }
}
