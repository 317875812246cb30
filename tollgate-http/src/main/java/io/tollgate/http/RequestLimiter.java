package io.tollgate.http;

import io.tollgate.Decision;
import io.tollgate.LimiterArguments;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.Priority;
import io.tollgate.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Protects an HTTP API with a {@link RateLimiter}: finds the rules that apply to a request, asks the limiter
 * for each, and says whether the request may proceed and which header fields its response carries. The
 * one enforcement path that the servlet filter, the Spring Boot starter and the Tollgate server share.
 *
 * <p><b>Several rules.</b> Every rule that matches a request applies, each charging its own bucket, and the
 * request is refused if any of them refuses. They are checked one after another in the order given, and a
 * refusal ends the check: the rules after it are not charged. Put the narrow rules (per client) before the
 * wide ones (a global limit), so that a client over its own limit costs the global limit nothing. Dry-run
 * rules never end the check.
 *
 * <p><b>Responses.</b> Every limited response, allowed or refused, carries {@code RateLimit-Policy} and
 * {@code RateLimit} for the rules checked. A refused request is answered with 429
 * Too Many Requests (or the configured status), {@code Retry-After} in whole seconds (rounded up, at least
 * 1), {@code Cache-Control: no-store}, and by default an RFC 9457 {@code application/problem+json} body
 * that names the violated policies. A request refused only because the limiter could not decide and fails
 * closed ({@link io.tollgate.FailurePolicy#DENY}) did not exceed anything: it is answered with 503 Service
 * Unavailable (or the configured status) and a problem of type {@value #UNAVAILABLE_TYPE}, with the same
 * {@code Retry-After}. A request that lacks a rule's key source is answered as the rule's {@link
 * MissingKey} says, before anything is charged.
 *
 * <p><b>Keys.</b> A client key longer than {@value #MAX_KEY_LENGTH} characters (a long API key, a composite)
 * is replaced by its SHA-256 digest, so that a client sending huge header values cannot make each bucket
 * cost kilobytes of memory or store.
 *
 * <p>Immutable and thread-safe.
 */
public final class RequestLimiter {

    /** The longest client key used as it is; longer keys are replaced by their digest. */
    public static final int MAX_KEY_LENGTH = LimiterArguments.MAX_KEY_LENGTH;

    /** The problem type of a refusal because the limiter is unavailable and fails closed. */
    public static final String UNAVAILABLE_TYPE = "urn:tollgate:limiter-unavailable";

    /** The default status of a refusal because the limiter is unavailable and fails closed. */
    public static final int DEFAULT_UNAVAILABLE_STATUS = 503;

    /** The status of a refusal unless set: 429 Too Many Requests. */
    public static final int DEFAULT_REFUSAL_STATUS = 429;

    /** The {@code type} of the problem body of a refusal unless set. */
    public static final String DEFAULT_PROBLEM_TYPE = "about:blank";

    /** The detail of the 403 problem answered to a client on a rule's denylist. */
    public static final String DENIED_DETAIL = "Requests from this client are refused.";

    private final RateLimiter limiter;
    private final List<Rule> rules;
    private final RequestMetrics metrics;
    private final DecisionAnswers answers;
    private final RuleMatching matching;
    private final CostSettlement settlement;
    private final OverloadProtection overload;
    private final PathSettings paths;

    private RequestLimiter(Builder builder) {
        this.limiter = builder.limiter;
        this.rules = List.copyOf(builder.rules);
        this.metrics = builder.metrics;
        this.answers = builder.answers();
        this.overload = builder.overload;
        this.paths = builder.paths;
        this.matching = new RuleMatching(
                rules,
                builder.clientIps,
                metrics,
                new RuleChecks(limiter, metrics, answers),
                builder.overload,
                Map.copyOf(builder.priorities));
        if (overload != null) {
            metrics.protection(overload);
        }
        this.settlement = new CostSettlement(limiter, metrics);
    }

    /**
     * Returns a builder that enforces rules with {@code limiter}.
     *
     * @throws NullPointerException if limiter is null
     */
    public static Builder builder(RateLimiter limiter) {
        return new Builder(limiter);
    }

    /** Returns the overload protection every request is admitted by, or null for none. */
    public OverloadProtection overload() {
        return overload;
    }

    /** Returns the rules, in the order they are checked. */
    public List<Rule> rules() {
        return rules;
    }

    /**
     * Returns how a request's path is read into its {@link NormalPath}: each surface reads the path it decides by
     * these settings, and refuses with 400 a path that they refuse.
     */
    public PathSettings paths() {
        return paths;
    }

    /**
     * Prepares this request limiter for traffic, so that the first real requests pay for no class loading
     * or compilation: warms its limiter ({@link RateLimiter#warmUp}), then checks and answers, allowed and
     * refused, rules of its own (policies {@code tollgate.warm-up-http} and {@code
     * tollgate.warm-up-http-refused}, on keys no client uses, whose buckets are full again within
     * milliseconds). A server or an application calls it before it says it is ready. What its checks recorded
     * in the request metrics is removed at the end; the limiter's own meters are the caller's to clean
     * ({@code MicrometerMetrics.forgetWarmUp}).
     *
     * @param maxTime the longest this may take
     * @return true once warm; false if the limiter's store could not be reached or {@code maxTime} ran out
     *     (the request limiter works all the same)
     * @throws IllegalArgumentException if maxTime is negative
     * @throws NullPointerException if maxTime is null
     */
    public boolean warmUp(Duration maxTime) {
        return HttpWarmUp.warmUp(this, limiter, metrics, maxTime);
    }

    /**
     * Decides a request. The stage completes when the rules that apply have decided: at once with the
     * in-memory limiter, and with a Redis limiter within its time budget per rule, never exceptionally for
     * a Redis fault. It completes exceptionally only if the limiter itself fails (a bug in a custom
     * limiter), which callers answer with a 500.
     *
     * @throws NullPointerException if request is null
     */
    public CompletionStage<RequestDecision> decide(HttpRequestView request) {
        return matching.decide(Objects.requireNonNull(request, "request"));
    }

    /**
     * Decides one rule for a client key that the caller found itself (such as from a method's arguments),
     * waiting for the limiter, and records it in the metrics. The key is used as it is, except that one longer
     * than {@value #MAX_KEY_LENGTH} characters becomes {@code sha256:} and its digest. With {@link #respond},
     * this lets other enforcement points, such as an annotation on a controller method, answer exactly as the
     * rules do.
     *
     * @throws IllegalArgumentException if the key is empty, or the rule has no policy (only a concurrency limit)
     * @throws NullPointerException if an argument is null
     */
    public RuleOutcome check(Rule rule, String key) {
        checkHasPolicy(rule);
        String bounded = LimiterArguments.boundedKey(Objects.requireNonNull(key, "key"));
        RuleOutcome outcome = new RuleOutcome(rule, bounded, limiter.tryAcquire(bounded, rule.policy(), rule.cost()));
        metrics.decided(outcome);
        return outcome;
    }

    /**
     * Decides one rule for a client key that the caller found itself, as {@link #check} does, without
     * waiting: for callers that must not block, such as a reactive controller method. The stage completes as
     * {@link #decide} says: at once in memory, within the time budget on Redis, exceptionally only if the
     * limiter itself fails.
     *
     * @throws IllegalArgumentException if the key is empty, or the rule has no policy (only a concurrency limit)
     * @throws NullPointerException if an argument is null
     */
    public CompletionStage<RuleOutcome> checkAsync(Rule rule, String key) {
        checkHasPolicy(rule);
        String bounded = LimiterArguments.boundedKey(Objects.requireNonNull(key, "key"));
        return limiter.tryAcquireAsync(bounded, rule.policy(), rule.cost()).thenApply(decision -> {
            RuleOutcome outcome = new RuleOutcome(rule, bounded, decision);
            metrics.decided(outcome);
            return outcome;
        });
    }

    /**
     * Settles the cost of a request once its response is known: for each rule that settles its cost after the
     * response ({@link ResponseCost}) and took tokens for it, charges what the request cost beyond them, or
     * gives back what it cost less. Call it once per request, when the response's status and header fields are
     * final; a decision that {@link RequestDecision#settlesAfterResponse() settles nothing} costs nothing here.
     * The slots of concurrency limits are given back by {@link #release}, when the response has ended.
     *
     * <p>The stage completes when the store has taken every charge and refund, never exceptionally: a store
     * that cannot be asked loses them (the cost taken when deciding stays), which is logged, as is a limiter
     * that cannot charge or refund.
     *
     * @param decision what {@link #decide} answered for the request
     * @param status the status the client was answered with
     * @param responseHeader the response's header field values by name, null where absent
     * @throws NullPointerException if decision or responseHeader is null
     */
    public CompletionStage<Void> settle(RequestDecision decision, int status, Function<String, String> responseHeader) {
        Objects.requireNonNull(decision, "decision");
        Objects.requireNonNull(responseHeader, "responseHeader");
        if (decision.overload() != null) {
            decision.overload().answered(status);
        }
        return settlement.settle(decision, status, responseHeader);
    }

    /**
     * Gives back the slots of concurrency limits that a request holds, once its response has ended: written,
     * failed, or abandoned by its client; and its room under {@link OverloadProtection}, whose limit learns from
     * the status {@link #settle} was given (nothing if it was not). Idempotent; never fails. Costs are not touched
     * ({@link #settle}).
     *
     * @throws NullPointerException if decision is null
     */
    public void release(RequestDecision decision) {
        decision.permits().forEach(Permit::releaseAsync);
        if (decision.overload() != null) {
            decision.overload().end();
        }
    }

    /**
     * Ends a request whose response has ended, as surfaces that know both moments at once call it: {@link
     * #settle settles} its costs with the status and header fields the client got and {@link #release gives
     * back} its slots. Nothing to do for a decision that {@link RequestDecision#settlesAfterResponse() settles
     * nothing}; never fails.
     *
     * @throws NullPointerException if an argument is null
     */
    public void finish(RequestDecision decision, int status, Function<String, String> responseHeader) {
        if (decision.settlesAfterResponse()) {
            settle(decision, status, responseHeader);
            release(decision);
        }
    }

    private static void checkHasPolicy(Rule rule) {
        if (Objects.requireNonNull(rule, "rule").policy() == null) {
            throw new IllegalArgumentException(
                    "rule '" + rule.name() + "' limits only requests in flight: decide it with decide(request)");
        }
    }

    /**
     * Returns what to answer for outcomes decided elsewhere: the rate-limit header fields for all of them
     * and, if any refuses, the refusal (status, {@code Retry-After} for the one that keeps the client waiting
     * longest, body) as this request limiter writes it.
     *
     * @throws IllegalArgumentException if there are no outcomes
     */
    public RequestDecision respond(List<RuleOutcome> outcomes) {
        return answers.respond(Objects.requireNonNull(outcomes, "outcomes"));
    }

    /**
     * Returns what to answer for one decision of {@code policy} made without rules, as the decision API makes
     * them: the rate-limit header fields and, if it refuses, the refusal, exactly as {@link #respond(List)}
     * answers a rule of that policy that is not a dry run. The {@link Refusal#outcomes()} a custom body sees
     * are empty (there was no rule).
     *
     * @throws NullPointerException if an argument is null
     */
    public RequestDecision respond(Policy policy, Decision decision) {
        return answers.respond(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(decision, "decision"));
    }

    /**
     * Records that a request lacks the source of {@code rule}'s key, and returns the answer its {@link
     * Rule#onMissingKey()} asks for if that rejects the request (a problem saying that the request must carry
     * {@code whatIsMissing}), or null if the rule is skipped or falls back to another key. For rules checked
     * elsewhere, such as an annotation whose key expression found nothing.
     *
     * @throws NullPointerException if an argument is null
     */
    public RequestDecision missingKey(Rule rule, String whatIsMissing) {
        return matching.missingKey(
                Objects.requireNonNull(rule, "rule"), Objects.requireNonNull(whatIsMissing, "whatIsMissing"));
    }

    /** Settings for a {@link RequestLimiter}. Not thread-safe. */
    public static final class Builder extends AnswerSettings<Builder> {

        private final RateLimiter limiter;
        private final List<Rule> rules = new ArrayList<>();
        private ClientIpResolver clientIps = ClientIpResolver.peerOnly();
        private RequestMetrics metrics = RequestMetrics.NONE;
        private OverloadProtection overload;
        private final Map<String, Priority> priorities = new HashMap<>();
        private PathSettings paths = PathSettings.DEFAULT;

        private Builder(RateLimiter limiter) {
            this.limiter = Objects.requireNonNull(limiter, "limiter");
        }

        /** Adds a rule. */
        public Builder rule(Rule rule) {
            rules.add(Objects.requireNonNull(rule, "rule"));
            return this;
        }

        /** Adds rules, in order. */
        public Builder rules(List<Rule> rules) {
            rules.forEach(this::rule);
            return this;
        }

        /** Sets how the client IP is found (default: the connection's peer, no proxy trusted). */
        public Builder clientIps(ClientIpResolver clientIps) {
            this.clientIps = Objects.requireNonNull(clientIps, "clientIps");
            return this;
        }

        /**
         * Records every rule's decision to Micrometer (see {@link MicrometerRequestMetrics} for names and
         * tags); by default nothing is recorded.
         */
        public Builder metrics(MicrometerRequestMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /**
         * Protects the service behind the requests from overload with {@code protection}, shared with the request
         * limiters built before and after this one for the same service (default: none). Every request is
         * admitted by it, at the priority its rules give, before any rule charges a bucket; a request it refuses is
         * answered {@value OverloadProtection#OVERLOADED_STATUS} and charges nothing.
         */
        public Builder overload(OverloadProtection protection) {
            this.overload = Objects.requireNonNull(protection, "protection");
            return this;
        }

        /**
         * Gives the requests charged {@code policy} (by name: a client's plan, such as one {@link
         * Rule.Builder#policyFrom} chooses) this priority when the service is overloaded, unless their rule sets
         * its own ({@link Rule.Builder#priority}).
         */
        public Builder priority(String policy, Priority priority) {
            priorities.put(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(priority, "priority"));
            return this;
        }

        /** Sets how request paths are read (default {@link PathSettings#DEFAULT}). */
        public Builder paths(PathSettings paths) {
            this.paths = Objects.requireNonNull(paths, "paths");
            return this;
        }

        /** Returns the request limiter. */
        public RequestLimiter build() {
            return new RequestLimiter(this);
        }
    }
}
