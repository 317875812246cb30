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
 */
public record Refusal(
        int status,
        long retryAfterSeconds,
        List<String> policies,
        List<RuleOutcome> outcomes,
        boolean limiterUnavailable) {

    /**
     * Copies the lists.
     *
     * @throws NullPointerException if a list is null
     */
    public Refusal {
        policies = List.copyOf(Objects.requireNonNull(policies, "policies"));
        outcomes = List.copyOf(Objects.requireNonNull(outcomes, "outcomes"));
    }
}
