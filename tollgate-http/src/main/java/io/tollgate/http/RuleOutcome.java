package io.tollgate.http;

import io.tollgate.Decision;
import io.tollgate.FailurePolicy;
import io.tollgate.Policy;
import java.util.Objects;

/**
 * What one rule decided for a request.
 *
 * @param rule the rule
 * @param policy the policy it charged: the rule's own, or the one its {@link PolicyChoice} gave
 * @param key the client key it charged
 * @param decision the limiter's decision
 */
public record RuleOutcome(Rule rule, Policy policy, String key, Decision decision) {

    /** @throws NullPointerException if an argument is null */
    public RuleOutcome {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(decision, "decision");
    }

    /**
     * Returns the outcome of a rule that charged its own policy.
     *
     * @throws NullPointerException if an argument is null
     */
    public RuleOutcome(Rule rule, String key, Decision decision) {
        this(rule, Objects.requireNonNull(rule, "rule").policy(), key, decision);
    }

    /** Returns whether this outcome refuses the request: refused, and not a dry run. */
    public boolean refuses() {
        return !decision.allowed() && !rule.dryRun();
    }

    /**
     * Returns whether this outcome's rule settles its cost after the response, and took tokens to settle: it
     * allowed the request (a dry run too), and the store decided it (a decision the failure policy made took
     * nothing to give back).
     */
    public boolean settlesAfterResponse() {
        return decision.allowed() && !decision.degraded() && rule.responseCost().settles();
    }

    /**
     * Returns whether this outcome refuses the request because the limiter could not decide and fails
     * closed ({@link FailurePolicy#DENY}), rather than because the client exceeded its limit.
     */
    public boolean limiterUnavailable() {
        return refuses() && decision.degraded() && decision.degradation().failsClosed();
    }
}
