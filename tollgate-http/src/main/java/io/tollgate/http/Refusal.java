package io.tollgate.http;

import java.util.List;
import java.util.Objects;

/**
 * What a custom refusal body is written from: see {@link RequestLimiter.Builder#refusalBody}.
 *
 * @param status the status the refusal is answered with: 429 unless configured otherwise, or 503 (unless
 *     configured otherwise) when the limiter is unavailable
 * @param retryAfterSeconds the {@code Retry-After} value: whole seconds, at least 1
 * @param policies the names of the policies that refused, each once, in rule order
 * @param outcomes what every rule that was checked decided, including those that allowed
 * @param limiterUnavailable whether the request is refused because the limiter could not decide and fails
 *     closed, rather than because the client exceeded a limit
 * @param tooManyInFlight whether the request is refused because the client has as many requests in flight
 *     as a {@link io.tollgate.ConcurrencyLimit} allows (named in {@code policies}), rather than for a rate
 */
public record Refusal(
        int status,
        long retryAfterSeconds,
        List<String> policies,
        List<RuleOutcome> outcomes,
        boolean limiterUnavailable,
        boolean tooManyInFlight) {

    /**
     * Copies the lists.
     *
     * @throws NullPointerException if a list is null
     */
    public Refusal {
        policies = List.copyOf(Objects.requireNonNull(policies, "policies"));
        outcomes = List.copyOf(Objects.requireNonNull(outcomes, "outcomes"));
    }

    /**
     * Returns the refusal of a request for a rate, not for requests in flight.
     *
     * @throws NullPointerException if a list is null
     */
    public Refusal(
            int status,
            long retryAfterSeconds,
            List<String> policies,
            List<RuleOutcome> outcomes,
            boolean limiterUnavailable) {
        this(status, retryAfterSeconds, policies, outcomes, limiterUnavailable, false);
    }
}
