package io.tollgate.http;

import java.util.Objects;
import java.util.function.Function;

/**
 * What a {@link RequestLimiter}'s answers carry, set on its {@link RequestLimiter.Builder}: the header fields beside
 * the standard ones, the statuses of a refusal and of a limiter that fails closed, and a refusal's body. Not
 * thread-safe.
 *
 * @param <B> the builder these settings return, for chaining
 */
abstract class AnswerSettings<B extends AnswerSettings<B>> {

    private boolean legacyHeaders;
    private boolean degradedHeader;
    private int refusalStatus = RequestLimiter.DEFAULT_REFUSAL_STATUS;
    private int unavailableStatus = RequestLimiter.DEFAULT_UNAVAILABLE_STATUS;
    private String refusalContentType = ProblemJson.CONTENT_TYPE;
    private Function<Refusal, String> refusalBody = DecisionAnswers.problemBody(RequestLimiter.DEFAULT_PROBLEM_TYPE);

    /** Also writes {@code X-RateLimit-Limit}, {@code -Remaining} and {@code -Reset} (default off). */
    public B legacyHeaders(boolean legacyHeaders) {
        this.legacyHeaders = legacyHeaders;
        return self();
    }

    /**
     * Writes {@code Tollgate-Degraded} on responses whose decision a failure policy made, such as {@code
     * "per-ip";cause=timeout;fallback=allow} (default off: clients need not know).
     */
    public B degradedHeader(boolean degradedHeader) {
        this.degradedHeader = degradedHeader;
        return self();
    }

    /**
     * Sets the status of a refusal (default 429; some prefer 503).
     *
     * @throws IllegalArgumentException unless status is a 4xx or 5xx status
     */
    public B refusalStatus(int status) {
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("refusal status must be 4xx or 5xx, was " + status);
        }
        this.refusalStatus = status;
        return self();
    }

    /**
     * Sets the status of a refusal because the limiter could not decide and fails closed (default
     * {@value RequestLimiter#DEFAULT_UNAVAILABLE_STATUS}): the client did not exceed anything, and should
     * not be told so.
     *
     * @throws IllegalArgumentException unless status is a 4xx or 5xx status
     */
    public B unavailableStatus(int status) {
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("unavailable status must be 4xx or 5xx, was " + status);
        }
        this.unavailableStatus = status;
        return self();
    }

    /**
     * Sets the {@code type} URI of the default problem body of a refusal (default {@code about:blank}),
     * and goes back to that body if {@link #refusalBody} was set.
     *
     * @throws IllegalArgumentException if uri is blank
     */
    public B problemType(String uri) {
        Objects.requireNonNull(uri, "uri");
        if (uri.isBlank()) {
            throw new IllegalArgumentException("problem type must not be blank; the default is about:blank");
        }
        this.refusalContentType = ProblemJson.CONTENT_TYPE;
        this.refusalBody = DecisionAnswers.problemBody(uri);
        return self();
    }

    /**
     * Replaces the body of a refusal: {@code body} is called for every refused request, on the thread that
     * decided it, and its text is sent in UTF-8 as {@code contentType}. It must not block, and should not
     * throw: an exception fails the request with a 500. The header fields stay as described in {@link
     * RequestLimiter}.
     *
     * @throws IllegalArgumentException if contentType is blank
     * @throws NullPointerException if an argument is null
     */
    public B refusalBody(String contentType, Function<Refusal, String> body) {
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(body, "body");
        if (contentType.isBlank()) {
            throw new IllegalArgumentException("content type of a refusal body must not be blank");
        }
        this.refusalContentType = contentType;
        this.refusalBody = body;
        return self();
    }

    /** Returns the answers these settings describe. */
    DecisionAnswers answers() {
        return new DecisionAnswers(
                legacyHeaders, degradedHeader, refusalStatus, unavailableStatus, refusalContentType, refusalBody);
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
