package io.tollgate.http;

import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.http.internal.RateLimitFields;
import io.tollgate.internal.Arguments;
import io.tollgate.internal.WarmUpKeys;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
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
 * {@code RateLimit} ({@link RateLimitFields}) for the rules checked. A refused request is answered with 429
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
    public static final int MAX_KEY_LENGTH = Arguments.MAX_KEY_LENGTH;

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

    private static final System.Logger SETTLE_LOG = System.getLogger(RequestLimiter.class.getName());

    private static final RequestDecision DENIED = RequestDecision.problem(403, DENIED_DETAIL);

    private static final int WARM_UP_CHECKS = 2_000;
    private static final Policy WARM_UP_PASSING =
            Policy.of(RateLimiter.WARM_UP_POLICY_PREFIX + "-http", Limit.of(1_000_000, Rate.perSecond(1_000_000)));
    private static final Policy WARM_UP_REFUSING =
            Policy.of(RateLimiter.WARM_UP_POLICY_PREFIX + "-http-refused", Limit.of(1, Rate.perSecond(1_000)));

    private final RateLimiter limiter;
    private final List<Rule> rules;
    private final ClientIpResolver clientIps;
    private final boolean legacyHeaders;
    private final boolean degradedHeader;
    private final int refusalStatus;
    private final int unavailableStatus;
    private final String refusalContentType;
    private final Function<Refusal, String> refusalBody;
    private final RequestMetrics metrics;
    /** Whether a rule takes slots of a concurrency limit: only then can a failed check leave one behind. */
    private final boolean holdsSlots;

    private RequestLimiter(Builder builder) {
        this.limiter = builder.limiter;
        this.rules = List.copyOf(builder.rules);
        this.clientIps = builder.clientIps;
        this.legacyHeaders = builder.legacyHeaders;
        this.degradedHeader = builder.degradedHeader;
        this.refusalStatus = builder.refusalStatus;
        this.unavailableStatus = builder.unavailableStatus;
        this.refusalContentType = builder.refusalContentType;
        this.refusalBody = builder.refusalBody;
        this.metrics = builder.metrics;
        this.holdsSlots = rules.stream().anyMatch(rule -> rule.inFlight() != null);
    }

    /**
     * Returns a builder that enforces rules with {@code limiter}.
     *
     * @throws NullPointerException if limiter is null
     */
    public static Builder builder(RateLimiter limiter) {
        return new Builder(limiter);
    }

    /** Returns the rules, in the order they are checked. */
    public List<Rule> rules() {
        return rules;
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
        long start = System.nanoTime();
        boolean warm = limiter.warmUp(maxTime);
        long maxNanos = Math.min(maxTime.toMillis(), Long.MAX_VALUE / 2_000_000) * 1_000_000;
        Rule passing = Rule.builder(WARM_UP_PASSING).build();
        Rule refusing = Rule.builder(WARM_UP_REFUSING).build();
        for (int i = 0; i < WARM_UP_CHECKS; i++) {
            if (System.nanoTime() - start > maxNanos) {
                warm = false;
                break;
            }
            String key = WarmUpKeys.key(i % 8);
            RuleOutcome allowed = check(passing, key);
            respond(List.of(allowed));
            respond(List.of(allowed, check(refusing, key)));
        }
        metrics.forgetWarmUp();
        return warm;
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
        Objects.requireNonNull(request, "request");
        List<Rule> applied = new ArrayList<>(rules.size());
        List<Policy> policies = new ArrayList<>(rules.size());
        List<String> keys = new ArrayList<>(rules.size());
        for (Rule rule : rules) {
            if (!rule.matches(request)) {
                continue;
            }
            ClientKey clientKey = rule.key();
            String key = clientKey.resolve(request, clientIps);
            if (key == null) {
                RequestDecision rejected = missingKey(rule, clientKey.describe());
                if (rejected != null) {
                    return CompletableFuture.completedFuture(rejected);
                }
                if (rule.onMissingKey() instanceof MissingKey.Fallback fallback) {
                    clientKey = fallback.key();
                    key = clientKey.resolve(request, clientIps);
                }
                if (key == null) {
                    continue;
                }
            }
            Policy policy = rule.policy();
            PolicyChoice choice = rule.choice();
            if (!choice.isFixed()) {
                String value = clientKey.value(request, clientIps);
                PolicyChoice.Listing listing = choice.listing(value, request, clientIps);
                if (listing != PolicyChoice.Listing.NONE) {
                    metrics.listed(rule, listing);
                    if (listing == PolicyChoice.Listing.DENIED && !rule.dryRun()) {
                        return CompletableFuture.completedFuture(DENIED);
                    }
                    continue; // an allowed client is not limited; a dry run's denied one is only counted
                }
                if (policy != null) {
                    policy = choice.choose(policy, request, value);
                }
            }
            applied.add(rule);
            policies.add(policy);
            keys.add(Arguments.boundedKey(key));
        }
        if (applied.isEmpty()) {
            return CompletableFuture.completedFuture(RequestDecision.unlimited());
        }
        Checks checks = new Checks(applied, policies, keys);
        CompletionStage<RequestDecision> decided = checkFrom(checks, 0);
        if (!holdsSlots) {
            return decided;
        }
        return decided.whenComplete((decision, failure) -> {
            if (failure != null) {
                checks.releasePermits(); // the limiter failed midway: nothing may keep a slot for this request
            }
        });
    }

    /** The checks of one request: the rules that apply, with their policies and keys, and what they decided. */
    private static final class Checks {

        final List<Rule> rules;
        final List<Policy> policies;
        final List<String> keys;
        final List<RuleOutcome> outcomes;
        List<Permit> permits = List.of(); // most requests hold no slot: no list for them

        Checks(List<Rule> rules, List<Policy> policies, List<String> keys) {
            this.rules = rules;
            this.policies = policies;
            this.keys = keys;
            this.outcomes = new ArrayList<>(rules.size());
        }

        void hold(Permit permit) {
            if (permits.isEmpty()) {
                permits = new ArrayList<>(1);
            }
            permits.add(permit);
        }

        void releasePermits() {
            permits.forEach(Permit::releaseAsync);
            permits = List.of();
        }
    }

    /**
     * Checks the rules from step {@code next} on, in order, until one refuses: each rule's step {@code 2i}
     * takes a slot of its concurrency limit, if it has one, and step {@code 2i+1} charges its policy, if it has
     * one (a request refused for its rate holds no slot; one refused for its slots takes no tokens). Decisions
     * that are ready at once are taken in this loop, so the in-memory limiter costs no future per rule.
     */
    private CompletionStage<RequestDecision> checkFrom(Checks checks, int next) {
        for (int step = next; step < 2 * checks.rules.size(); step++) {
            int index = step / 2;
            Rule rule = checks.rules.get(index);
            String key = checks.keys.get(index);
            int following = step + 1;
            if (step % 2 == 0) {
                if (rule.inFlight() == null) {
                    continue;
                }
                CompletableFuture<Permit> pending =
                        limiter.tryAcquirePermitAsync(key, rule.inFlight()).toCompletableFuture();
                if (!pending.isDone() || pending.isCompletedExceptionally()) {
                    return pending.thenCompose(permit -> holds(checks, rule, permit)
                            ? checkFrom(checks, following)
                            : CompletableFuture.completedFuture(tooManyInFlight(checks, permit)));
                }
                if (!holds(checks, rule, pending.join())) {
                    return CompletableFuture.completedFuture(tooManyInFlight(checks, pending.join()));
                }
                continue;
            }
            Policy policy = checks.policies.get(index);
            if (policy == null) {
                continue;
            }
            CompletableFuture<Decision> pending =
                    limiter.tryAcquireAsync(key, policy, rule.cost()).toCompletableFuture();
            if (!pending.isDone() || pending.isCompletedExceptionally()) {
                return pending.thenCompose(
                        decision -> record(checks.outcomes, new RuleOutcome(rule, policy, key, decision))
                                ? CompletableFuture.completedFuture(refused(checks))
                                : checkFrom(checks, following));
            }
            if (record(checks.outcomes, new RuleOutcome(rule, policy, key, pending.join()))) {
                return CompletableFuture.completedFuture(refused(checks));
            }
        }
        if (checks.outcomes.isEmpty()) {
            return CompletableFuture.completedFuture(
                    new RequestDecision(true, 200, Map.of(), new byte[0], List.of(), checks.permits));
        }
        RequestDecision allowed = respond(checks.outcomes);
        return CompletableFuture.completedFuture(
                checks.permits.isEmpty()
                        ? allowed
                        : new RequestDecision(
                                true,
                                allowed.status(),
                                allowed.headers(),
                                new byte[0],
                                allowed.outcomes(),
                                checks.permits));
    }

    /** Records a permit; returns whether the request may go on: the slot was taken, or the rule only reports. */
    private boolean holds(Checks checks, Rule rule, Permit permit) {
        metrics.permit(rule, permit);
        if (permit.acquired()) {
            checks.hold(permit);
            return true;
        }
        return rule.dryRun();
    }

    /** Returns the answer to a request that a rule refused for its rate, giving back the slots it took. */
    private RequestDecision refused(Checks checks) {
        checks.releasePermits();
        return respond(checks.outcomes);
    }

    /**
     * Returns the answer to a request refused because its client has as many requests in flight as a rule's
     * concurrency limit allows, giving back the slots it took: 429 (or the configured status), or the
     * unavailable status when the limiter could not decide and fails closed, {@code Retry-After: 1} (a slot
     * comes back when a request ends, which nobody can foretell), and the rate-limit fields of the rules
     * decided before it.
     */
    private RequestDecision tooManyInFlight(Checks checks, Permit refused) {
        checks.releasePermits();
        boolean unavailable = refused.degraded() && refused.degradation().fallback() == FailurePolicy.DENY;
        int status = unavailable ? unavailableStatus : refusalStatus;
        Map<String, String> headers = new LinkedHashMap<>();
        if (!checks.outcomes.isEmpty()) {
            headers.putAll(respond(checks.outcomes).headers());
        }
        headers.put("Retry-After", "1");
        headers.put("Cache-Control", "no-store");
        headers.put("Content-Type", refusalContentType);
        byte[] body = refusalBody
                .apply(new Refusal(status, 1, List.of(refused.limit().name()), checks.outcomes, unavailable, true))
                .getBytes(StandardCharsets.UTF_8);
        return new RequestDecision(false, status, headers, body, checks.outcomes);
    }

    /** Adds an outcome; returns whether it refuses the request, which ends the check. */
    private boolean record(List<RuleOutcome> outcomes, RuleOutcome outcome) {
        outcomes.add(outcome);
        metrics.decided(outcome);
        return outcome.refuses();
    }

    /**
     * Decides one rule for a client key that the caller found itself (such as from a method's arguments),
     * waiting for the limiter, and records it in the metrics. The key is used as it is, except that one longer than {@value
     * #MAX_KEY_LENGTH} characters becomes {@code sha256:} and its digest. With {@link #respond}, this lets other enforcement points, such as an annotation on
     * a controller method, answer exactly as the rules do.
     *
     * @throws IllegalArgumentException if the key is empty, or the rule has no policy (only a concurrency limit)
     * @throws NullPointerException if an argument is null
     */
    public RuleOutcome check(Rule rule, String key) {
        checkHasPolicy(rule);
        String bounded = Arguments.boundedKey(Objects.requireNonNull(key, "key"));
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
        String bounded = Arguments.boundedKey(Objects.requireNonNull(key, "key"));
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
        List<CompletableFuture<?>> pending = new ArrayList<>();
        for (RuleOutcome outcome : decision.outcomes()) {
            if (!outcome.settlesAfterResponse()) {
                continue;
            }
            long taken = outcome.rule().cost();
            long difference = outcome.rule().responseCost().finalCost(taken, status, responseHeader) - taken;
            if (difference == 0) {
                continue;
            }
            CompletableFuture<?> settled;
            try {
                settled = (difference > 0
                                ? limiter.chargeAsync(outcome.key(), outcome.policy(), difference)
                                : limiter.refundAsync(outcome.key(), outcome.policy(), -difference))
                        .toCompletableFuture();
            } catch (RuntimeException e) {
                settled = CompletableFuture.failedFuture(e);
            }
            pending.add(settled.handle((done, failure) -> {
                metrics.settled(outcome, difference, failure == null);
                if (failure != null) {
                    SETTLE_LOG.log(
                            System.Logger.Level.WARNING,
                            () -> "Tollgate: could not " + (difference > 0 ? "charge " : "refund ")
                                    + Math.abs(difference)
                                    + " tokens of policy '" + outcome.policy().name() + "' after the response: "
                                    + (failure.getCause() == null ? failure : failure.getCause()));
                }
                return null;
            }));
        }
        return pending.isEmpty()
                ? CompletableFuture.completedFuture(null)
                : CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    }

    /**
     * Gives back the slots of concurrency limits that a request holds, once its response has ended: written,
     * failed, or abandoned by its client. Idempotent; never fails. Costs are not touched ({@link #settle}).
     *
     * @throws NullPointerException if decision is null
     */
    public void release(RequestDecision decision) {
        decision.permits().forEach(Permit::releaseAsync);
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
        if (outcomes.isEmpty()) {
            throw new IllegalArgumentException("no outcomes to respond to");
        }
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("RateLimit-Policy", RateLimitFields.policy(outcomes));
        headers.put("RateLimit", RateLimitFields.rateLimit(outcomes));
        if (legacyHeaders) {
            headers.putAll(RateLimitFields.legacy(outcomes));
        }
        if (degradedHeader) {
            String degraded = degradations(outcomes);
            if (!degraded.isEmpty()) {
                headers.put("Tollgate-Degraded", degraded);
            }
        }
        List<RuleOutcome> refusals =
                outcomes.stream().filter(RuleOutcome::refuses).toList();
        if (refusals.isEmpty()) {
            return new RequestDecision(true, 200, headers, new byte[0], outcomes);
        }
        // A client over its limit is told so, even if another rule could not decide.
        boolean unavailable = refusals.stream().allMatch(RuleOutcome::limiterUnavailable);
        int status = unavailable ? unavailableStatus : refusalStatus;
        long retryAfter = RateLimitFields.retryAfterSeconds(
                RateLimitFields.mostRestrictive(refusals).decision());
        headers.put("Retry-After", Long.toString(retryAfter));
        headers.put("Cache-Control", "no-store");
        headers.put("Content-Type", refusalContentType);
        List<String> policies = refusals.stream()
                .map(outcome -> outcome.policy().name())
                .distinct()
                .toList();
        byte[] body = refusalBody
                .apply(new Refusal(status, retryAfter, policies, outcomes, unavailable))
                .getBytes(StandardCharsets.UTF_8);
        return new RequestDecision(false, status, headers, body, outcomes);
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
        metrics.missingKey(Objects.requireNonNull(rule, "rule"));
        Objects.requireNonNull(whatIsMissing, "whatIsMissing");
        if (rule.onMissingKey() instanceof MissingKey.Reject reject) {
            return RequestDecision.problem(reject.status(), "This request must carry " + whatIsMissing + ".");
        }
        return null;
    }

    /** Returns, for the degraded outcomes, {@code "policy";cause=timeout;fallback=allow} items. */
    private static String degradations(List<RuleOutcome> outcomes) {
        List<String> items = new ArrayList<>();
        for (RuleOutcome outcome : outcomes) {
            Degradation degradation = outcome.decision().degradation();
            if (degradation != null) {
                items.add("\"" + outcome.policy().name() + "\";cause="
                        + degradation.cause().name().toLowerCase(Locale.ROOT).replace('_', '-')
                        + ";fallback="
                        + degradation.fallback().name().toLowerCase(Locale.ROOT));
            }
        }
        return String.join(", ", items);
    }

    /**
     * The default refusal body: an RFC 9457 problem of the given type, or of type {@value #UNAVAILABLE_TYPE}
     * when the limiter is unavailable.
     */
    private static Function<Refusal, String> problemBody(String type) {
        return refusal -> refusal.limiterUnavailable()
                ? ProblemJson.write(
                        UNAVAILABLE_TYPE,
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

    /** Settings for a {@link RequestLimiter}. Not thread-safe. */
    public static final class Builder {

        private final RateLimiter limiter;
        private final List<Rule> rules = new ArrayList<>();
        private ClientIpResolver clientIps = ClientIpResolver.peerOnly();
        private boolean legacyHeaders;
        private boolean degradedHeader;
        private int refusalStatus = DEFAULT_REFUSAL_STATUS;
        private int unavailableStatus = DEFAULT_UNAVAILABLE_STATUS;
        private String refusalContentType = ProblemJson.CONTENT_TYPE;
        private Function<Refusal, String> refusalBody = problemBody(DEFAULT_PROBLEM_TYPE);
        private RequestMetrics metrics = RequestMetrics.NONE;

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

        /** Also writes {@code X-RateLimit-Limit}, {@code -Remaining} and {@code -Reset} (default off). */
        public Builder legacyHeaders(boolean legacyHeaders) {
            this.legacyHeaders = legacyHeaders;
            return this;
        }

        /**
         * Writes {@code Tollgate-Degraded} on responses whose decision a failure policy made, such as {@code
         * "per-ip";cause=timeout;fallback=allow} (default off: clients need not know).
         */
        public Builder degradedHeader(boolean degradedHeader) {
            this.degradedHeader = degradedHeader;
            return this;
        }

        /**
         * Sets the status of a refusal (default 429; some prefer 503).
         *
         * @throws IllegalArgumentException unless status is a 4xx or 5xx status
         */
        public Builder refusalStatus(int status) {
            if (status < 400 || status > 599) {
                throw new IllegalArgumentException("refusal status must be 4xx or 5xx, was " + status);
            }
            this.refusalStatus = status;
            return this;
        }

        /**
         * Sets the status of a refusal because the limiter could not decide and fails closed (default
         * {@value RequestLimiter#DEFAULT_UNAVAILABLE_STATUS}): the client did not exceed anything, and should
         * not be told so.
         *
         * @throws IllegalArgumentException unless status is a 4xx or 5xx status
         */
        public Builder unavailableStatus(int status) {
            if (status < 400 || status > 599) {
                throw new IllegalArgumentException("unavailable status must be 4xx or 5xx, was " + status);
            }
            this.unavailableStatus = status;
            return this;
        }

        /**
         * Sets the {@code type} URI of the default problem body of a refusal (default {@code about:blank}),
         * and goes back to that body if {@link #refusalBody} was set.
         *
         * @throws IllegalArgumentException if uri is blank
         */
        public Builder problemType(String uri) {
            Objects.requireNonNull(uri, "uri");
            if (uri.isBlank()) {
                throw new IllegalArgumentException("problem type must not be blank; the default is about:blank");
            }
            this.refusalContentType = ProblemJson.CONTENT_TYPE;
            this.refusalBody = problemBody(uri);
            return this;
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
        public Builder refusalBody(String contentType, Function<Refusal, String> body) {
            Objects.requireNonNull(contentType, "contentType");
            Objects.requireNonNull(body, "body");
            if (contentType.isBlank()) {
                throw new IllegalArgumentException("content type of a refusal body must not be blank");
            }
            this.refusalContentType = contentType;
            this.refusalBody = body;
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

        /** Returns the request limiter. */
        public RequestLimiter build() {
            return new RequestLimiter(this);
        }
    }
}
