package io.tollgate.http;

import io.tollgate.Permit;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What to do with an HTTP request: let it through with the rate-limit header fields added to its
 * response, or answer it at once with {@link #status()}, the headers and {@link #body()}.
 *
 * @param allowed whether the request may proceed
 * @param status for a refused request, the status to answer with (429 by default); 200 otherwise
 * @param headers header fields to set on the response, allowed or not, in order
 * @param body for a refused request, the {@code application/problem+json} body; empty otherwise
 * @param outcomes what each rule that applied decided, for metrics and logs
 * @param permits the slots of concurrency limits that an allowed request holds until its response ends
 *     (given back by {@link RequestLimiter#settle} or {@link RequestLimiter#release}); none for a refusal
 * @param overload the room an allowed request holds under the {@link OverloadProtection} until its response ends
 *     (given back the same way), or null where there is none; null for a refusal
 */
public record RequestDecision(
        boolean allowed,
        int status,
        Map<String, String> headers,
        byte[] body,
        List<RuleOutcome> outcomes,
        List<Permit> permits,
        OverloadProtection.Slot overload) {

    private static final RequestDecision UNLIMITED = new RequestDecision(true, 200, Map.of(), new byte[0], List.of());

    /** Copies the headers, outcomes and permits. */
    public RequestDecision {
        headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        outcomes = List.copyOf(outcomes);
        permits = List.copyOf(permits);
    }

    /** Returns a decision that holds no room under overload protection. */
    public RequestDecision(
            boolean allowed,
            int status,
            Map<String, String> headers,
            byte[] body,
            List<RuleOutcome> outcomes,
            List<Permit> permits) {
        this(allowed, status, headers, body, outcomes, permits, null);
    }

    /** Returns a decision that holds no permits. */
    public RequestDecision(
            boolean allowed, int status, Map<String, String> headers, byte[] body, List<RuleOutcome> outcomes) {
        this(allowed, status, headers, body, outcomes, List.of());
    }

    /** Returns this decision holding {@code slot} until its response ends. */
    RequestDecision holding(OverloadProtection.Slot slot) {
        return new RequestDecision(allowed, status, headers, body, outcomes, permits, slot);
    }

    /**
     * Returns the answer to a request whose limiter failed with an unexpected exception (a bug, never a store
     * fault, which the failure policy answers): 500 with a problem that sends the reader to the server log,
     * where the caller writes the exception. Every surface answers this, and nothing of the exception.
     */
    public static RequestDecision limiterFailed() {
        return problem(500, "The rate limiter failed; the server log says why.");
    }

    /**
     * Returns a refusal with {@code status} and an RFC 9457 body of type {@code about:blank} that says {@code
     * detail}, for answers that are not about a rate limit, such as a missing API key or a failed limiter.
     *
     * @throws IllegalArgumentException if status is not a 4xx or 5xx status
     */
    public static RequestDecision problem(int status, String detail) {
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("a problem has a 4xx or 5xx status, was " + status);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Cache-Control", "no-store");
        headers.put("Content-Type", ProblemJson.CONTENT_TYPE);
        return new RequestDecision(
                false,
                status,
                headers,
                ProblemJson.write("about:blank", status, detail, List.of(), null)
                        .getBytes(StandardCharsets.UTF_8),
                List.of());
    }

    /** Returns the decision for a request that no rule applies to. */
    static RequestDecision unlimited() {
        return UNLIMITED;
    }

    /**
     * Returns whether something is left to do once the response is known: a rule that took tokens for this
     * request settles its cost ({@link ResponseCost}), or the request holds permits of concurrency limits. Then
     * the surface that answers the request hands the response's status and header fields to {@link
     * RequestLimiter#settle} once they are final, and calls {@link RequestLimiter#release} when the response has
     * ended.
     */
    public boolean settlesAfterResponse() {
        if (!permits.isEmpty() || overload != null) {
            return true;
        }
        for (RuleOutcome outcome : outcomes) {
            if (outcome.settlesAfterResponse()) {
                return true;
            }
        }
        return false;
    }

    /** Returns a copy of the body, for callers that must not share it. */
    @Override
    public byte[] body() {
        return body.clone();
    }
}
