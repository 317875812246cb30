package io.tollgate.spring;

import io.tollgate.http.RequestDecision;

/**
 * A call that {@link RateLimit @RateLimit} rejects because it lacks the key it is limited by, and its
 * {@code onMissingKey} says {@code reject:STATUS}: answered by the {@link RateLimitExceptionResolver} with
 * that status and a problem body, as a rule answers a request without its key.
 */
final class MissingRateLimitKeyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient RequestDecision answer;

    MissingRateLimitKeyException(RequestDecision answer) {
        super("a @RateLimit key is missing; answered " + answer.status(), null, false, false);
        this.answer = answer;
    }

    /** Returns what to answer the call. */
    RequestDecision answer() {
        return answer;
    }
}
