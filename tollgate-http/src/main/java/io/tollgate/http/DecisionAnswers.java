package io.tollgate.http;

import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.Priority;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * What a {@link RequestLimiter} answers for decisions: the rate-limit header fields of every limited response,
 * and the status, {@code Retry-After} and body of a refusal, as its builder configured them. The one place a
 * response is written from decisions, for the rules a request matched and for a decision the decision API made
 * for a policy alone.
 *
 * <p>Thread-safe.
 */
final class DecisionAnswers {

    private final PolicyFields policyFields = new PolicyFields();

    private final boolean legacyHeaders;
    private final boolean degradedHeader;
    private final int refusalStatus;
    private final int unavailableStatus;
    private final String refusalContentType;
    private final Function<Refusal, String> refusalBody;

    DecisionAnswers(
            boolean legacyHeaders,
            boolean degradedHeader,
            int refusalStatus,
            int unavailableStatus,
            String refusalContentType,
            Function<Refusal, String> refusalBody) {
        this.legacyHeaders = legacyHeaders;
        this.degradedHeader = degradedHeader;
        this.refusalStatus = refusalStatus;
        this.unavailableStatus = unavailableStatus;
        this.refusalContentType = refusalContentType;
        this.refusalBody = refusalBody;
    }

    /** The answer to the rules a request matched: see {@link RequestLimiter#respond(List)}. */
    RequestDecision respond(List<RuleOutcome> outcomes) {
        if (outcomes.isEmpty()) {
            throw new IllegalArgumentException("no outcomes to respond to");
        }
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put(
                "RateLimit-Policy",
                outcomes.size() == 1 ? policyFields.of(outcomes.get(0).policy()) : RateLimitFields.policy(outcomes));
        headers.put("RateLimit", RateLimitFields.rateLimit(outcomes));
        if (legacyHeaders) {
            headers.putAll(RateLimitFields.legacy(outcomes));
        }
        if (degradedHeader) {
            List<String> items = new ArrayList<>();
            for (RuleOutcome outcome : outcomes) {
                addDegradation(items, outcome.policy(), outcome.decision());
            }
            if (!items.isEmpty()) {
                headers.put("Tollgate-Degraded", String.join(", ", items));
            }
        }
        List<RuleOutcome> refusals =
                outcomes.stream().filter(RuleOutcome::refuses).toList();
        if (refusals.isEmpty()) {
            return new RequestDecision(true, 200, headers, new byte[0], outcomes);
        }
        // A client over its limit is told so, even if another rule could not decide.
        boolean unavailable = refusals.stream().allMatch(RuleOutcome::limiterUnavailable);
        Decision longest = RateLimitFields.mostRestrictive(refusals).decision();
        List<String> policies = refusals.stream()
                .map(outcome -> outcome.policy().name())
                .distinct()
                .toList();
        return refusal(headers, longest, policies, outcomes, unavailable);
    }

    /**
     * The answer to one decision of a policy made without rules: see {@link RequestLimiter#respond(Policy,
     * Decision)}.
     */
    RequestDecision respond(Policy policy, Decision decision) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("RateLimit-Policy", policyFields.of(policy));
        headers.put("RateLimit", RateLimitFields.rateLimit(policy, decision));
        if (legacyHeaders) {
            headers.putAll(RateLimitFields.legacy(decision));
        }
        if (degradedHeader) {
            List<String> items = new ArrayList<>(1);
            addDegradation(items, policy, decision);
            if (!items.isEmpty()) {
                headers.put("Tollgate-Degraded", items.get(0));
            }
        }
        if (decision.allowed()) {
            return new RequestDecision(true, 200, headers, new byte[0], List.of());
        }
        boolean unavailable = decision.degraded() && decision.degradation().failsClosed();
        return refusal(headers, decision, List.of(policy.name()), List.of(), unavailable);
    }

    /**
     * Returns the answer to a request refused because its client has as many requests in flight as a rule's
     * concurrency limit allows: 429 (or the configured status), or the unavailable status when the limiter
     * could not decide and fails closed, {@code Retry-After: 1} (a slot comes back when a request ends, which
     * nobody can foretell), and the rate-limit fields of the rules decided before it.
     */
    RequestDecision tooManyInFlight(List<RuleOutcome> decidedBefore, Permit refused) {
        boolean unavailable = refused.degraded() && refused.degradation().failsClosed();
        int status = unavailable ? unavailableStatus : refusalStatus;
        Map<String, String> headers = new LinkedHashMap<>();
        if (!decidedBefore.isEmpty()) {
            headers.putAll(respond(decidedBefore).headers());
        }
        headers.put("Retry-After", "1");
        headers.put("Cache-Control", "no-store");
        headers.put("Content-Type", refusalContentType);
        byte[] body = refusalBody
                .apply(new Refusal(status, 1, List.of(refused.limit().name()), decidedBefore, unavailable, true))
                .getBytes(StandardCharsets.UTF_8);
        return new RequestDecision(false, status, headers, body, decidedBefore);
    }

    /**
     * Returns the answer to a request refused because the service is overloaded ({@link OverloadProtection}):
     * {@value OverloadProtection#OVERLOADED_STATUS}, {@code Retry-After}, and a problem of type {@value
     * OverloadProtection#OVERLOADED_TYPE}, whatever the refusal body of rate limits (it is not about one).
     */
    static RequestDecision overloaded(long retryAfterSeconds, Priority priority) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Retry-After", Long.toString(retryAfterSeconds));
        headers.put("Cache-Control", "no-store");
        headers.put("Content-Type", ProblemJson.CONTENT_TYPE);
        byte[] body = ProblemJson.write(
                        OverloadProtection.OVERLOADED_TYPE,
                        "Service overloaded",
                        OverloadProtection.OVERLOADED_STATUS,
                        "The service is overloaded and serves the most important requests first (this one is "
                                + priority.text() + "); retry in " + retryAfterSeconds + " s.",
                        List.of(),
                        retryAfterSeconds)
                .getBytes(StandardCharsets.UTF_8);
        return new RequestDecision(false, OverloadProtection.OVERLOADED_STATUS, headers, body, List.of());
    }

    /** Completes the fields of a refusal for a rate and writes its body. */
    private RequestDecision refusal(
            Map<String, String> headers,
            Decision longest,
            List<String> policies,
            List<RuleOutcome> outcomes,
            boolean unavailable) {
        int status = unavailable ? unavailableStatus : refusalStatus;
        long retryAfter = RateLimitFields.retryAfterSeconds(longest);
        headers.put("Retry-After", Long.toString(retryAfter));
        headers.put("Cache-Control", "no-store");
        headers.put("Content-Type", refusalContentType);
        byte[] body = refusalBody
                .apply(new Refusal(status, retryAfter, policies, outcomes, unavailable))
                .getBytes(StandardCharsets.UTF_8);
        return new RequestDecision(false, status, headers, body, outcomes);
    }

    /** Adds {@code "policy";cause=timeout;fallback=allow} if a failure policy made the decision. */
    private static void addDegradation(List<String> items, Policy policy, Decision decision) {
        Degradation degradation = decision.degradation();
        if (degradation != null) {
            items.add("\"" + policy.name() + "\";cause="
                    + degradation.cause().name().toLowerCase(Locale.ROOT).replace('_', '-')
                    + ";fallback="
                    + degradation.fallback().name().toLowerCase(Locale.ROOT));
        }
    }

    /**
     * The default refusal body: an RFC 9457 problem of the given type, or of type {@value
     * RequestLimiter#UNAVAILABLE_TYPE} when the limiter is unavailable.
     */
    static Function<Refusal, String> problemBody(String type) {
        return refusal -> refusal.limiterUnavailable()
                ? ProblemJson.write(
                        RequestLimiter.UNAVAILABLE_TYPE,
                        "Rate limiter unavailable",
                        refusal.status(),
                        "The rate limiter cannot decide for " + String.join(", ", refusal.policies())
                                + " and refuses requests until it can; retry in " + refusal.retryAfterSeconds()
                                + " s.",
                        refusal.policies(),
                        refusal.retryAfterSeconds())
                : ProblemJson.write(
                        type,
                        refusal.status(),
                        (refusal.tooManyInFlight() ? "Too many requests in flight for " : "Rate limit exceeded for ")
                                + String.join(", ", refusal.policies()) + "; retry in "
                                + refusal.retryAfterSeconds() + " s.",
                        refusal.policies(),
                        refusal.retryAfterSeconds());
    }
}
