package io.tollgate.spring;

import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.http.Rule;
import io.tollgate.http.RuleOutcome;
import java.util.List;
import java.util.Objects;

/**
 * Tells Spring MVC that a request was refused by a rate limit, so that it is answered as the filter answers
 * one: 429 (or the configured status), {@code Retry-After}, the rate-limit header fields and a problem body.
 * Thrown by {@link RateLimit @RateLimit}, and by services that ask a {@link io.tollgate.RateLimiter}
 * themselves:
 *
 * <pre>{@code
 * Decision decision = limiter.tryAcquire("export:" + tenant, exports);
 * if (!decision.allowed()) {
 *     throw new RateLimitExceededException(exports, decision);
 * }
 * }</pre>
 *
 * <p>Outside a Spring MVC request it is an ordinary exception.
 */
public class RateLimitExceededException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient List<RuleOutcome> outcomes;

    /**
     * Creates the exception for a refused decision of {@code policy}.
     *
     * @throws IllegalArgumentException if the decision allowed the request
     * @throws NullPointerException if an argument is null
     */
    public RateLimitExceededException(Policy policy, Decision decision) {
        this(List.of(new RuleOutcome(
                Rule.builder(Objects.requireNonNull(policy, "policy")).build(),
                "",
                Objects.requireNonNull(decision, "decision"))));
        if (decision.allowed()) {
            throw new IllegalArgumentException("the decision of policy '" + policy.name() + "' allowed the request");
        }
    }

    /** Creates the exception for outcomes of which at least one refuses. */
    RateLimitExceededException(List<RuleOutcome> outcomes) {
        super(message(outcomes), null, false, false);
        this.outcomes = List.copyOf(outcomes);
    }

    /** Returns what each limit checked decided; at least one refused. */
    public List<RuleOutcome> outcomes() {
        return outcomes;
    }

    private static String message(List<RuleOutcome> outcomes) {
        return "rate limit exceeded for "
                + String.join(
                        ", ",
                        outcomes.stream()
                                .filter(RuleOutcome::refuses)
                                .map(outcome -> outcome.policy().name())
                                .toList());
    }
}
