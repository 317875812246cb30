package io.tollgate.http;

import io.tollgate.Decision;

/**
 * What one rule decided for a request.
 *
 * @param rule the rule
 * @param key the client key it charged
 * @param decision the limiter's decision
 */
public record RuleOutcome(Rule rule, String key, Decision decision) {

    /** Returns whether this outcome refuses the request: refused, and not a dry run. */
    public boolean refuses() {
        return !decision.allowed() && !rule.dryRun();
    }
}
