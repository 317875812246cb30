package io.tollgate.server;

import com.fasterxml.jackson.core.JsonGenerator;
import io.tollgate.BucketState;
import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.TokenBucket;
import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import io.tollgate.server.CheckRequest.BadRequest;
import io.tollgate.server.CheckRequest.Check;
import io.tollgate.server.internal.access.Callers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The decision API, {@code POST /v1/check}: takes {@code {"policy": "per-client", "key": "alice", "cost": 1}}
 * and answers 200 when the request is allowed and 429 when it is refused (or the configured refusal
 * status), with the decision as JSON and the same rate-limit header fields as proxied responses, rendered by
 * the same {@link RequestLimiter}. A request refused because the store could not decide and the failure
 * policy is {@code deny} is answered 503 (or the configured status) with an RFC 9457 problem that says the
 * limiter is unavailable and also carries the decision's fields. {@code {"checks": [...]}} decides up to
 * {@value CheckRequest#MAX_CHECKS} such requests in one round trip, each on its own, and answers 200 with their {@code
 * results} in order.
 *
 * <p>Client errors are RFC 9457 problems: malformed JSON, a missing, unknown or wrong-typed field, a cost out
 * of range or a key longer than {@value CheckRequest#MAX_KEY_FIELD_LENGTH} characters get 400, an unknown
 * policy 404, a body over {@value #MAX_BODY_BYTES} bytes 413, another method than POST 405. After a 413 the
 * rest of the body is read and thrown away, up to {@value #LINGER_MAX_BYTES} bytes and
 * {@value #LINGER_MAX_SECONDS} seconds, as nginx's lingering close does, so that a client that writes its
 * whole body before reading gets the 413 rather than a broken pipe; then the connection is closed.
 * Thread-safe.
 */
final class CheckApi {

    /** The largest request body, in bytes. */
    static final int MAX_BODY_BYTES = 64 * 1024;

    /** The detail of the 413 that a body over {@link #MAX_BODY_BYTES} gets. */
    static final String TOO_LARGE = "The body is larger than " + MAX_BODY_BYTES + " bytes; send fewer checks.";

    /** The most bytes of a refused body read and thrown away after a 413. */
    static final long LINGER_MAX_BYTES = 32L * 1024 * 1024;

    /** The longest a refused body is read and thrown away after a 413, in seconds. */
    static final long LINGER_MAX_SECONDS = 5;

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /**
     * What the decision API puts before a caller's key unless its policy shares the proxy rules' keys: no rule's
     * key starts so (theirs start with the kind of key: {@code ip:}, {@code header:} and so on), so that no caller
     * of the decision API can check or charge a proxied client's bucket.
     */
    static final String KEY_PREFIX = "api:";

    private final Map<String, Policy> policies;
    private final Set<String> sharedRuleKeys;
    private final RateLimiter limiter;
    private final RequestLimiter answers;
    private final ServerMetrics metrics;

    /** What to answer a request: the status, the header fields, Content-Type included, and the body. */
    record Answer(int status, Map<String, String> headers, byte[] body) {

        /** The Content-Type of a JSON answer. */
        static final String JSON = "application/json";

        static Answer of(RequestDecision decision) {
            return new Answer(decision.status(), decision.headers(), decision.body());
        }

        static Answer json(int status, Map<String, String> headers, String json) {
            Map<String, String> withType = new LinkedHashMap<>(headers);
            withType.put("Content-Type", JSON);
            return new Answer(status, withType, json.getBytes(StandardCharsets.UTF_8));
        }

        /** An RFC 9457 problem of {@code status} saying {@code detail}. */
        static Answer problem(int status, String detail) {
            return of(RequestDecision.problem(status, detail));
        }

        /** 405 with {@code Allow} listing the methods, for the first of which the problem asks. */
        static Answer methodNotAllowed(String path, String method, String... allowed) {
            RequestDecision problem =
                    RequestDecision.problem(405, "Use " + allowed[0] + " for " + path + ", not " + method + ".");
            Map<String, String> headers = new LinkedHashMap<>(problem.headers());
            headers.put("Allow", String.join(", ", allowed));
            return new Answer(405, headers, problem.body());
        }
    }

    /**
     * @param sharedRuleKeys the policies whose keys are the proxy rules' keys, as sent; every other policy's keys
     *     are kept under {@value #KEY_PREFIX}
     * @param answers renders the status and header fields of every decision, as for proxied requests (its
     *     rules are not used)
     */
    CheckApi(
            Map<String, Policy> policies,
            Set<String> sharedRuleKeys,
            RateLimiter limiter,
            RequestLimiter answers,
            ServerMetrics metrics) {
        this.policies = Map.copyOf(policies);
        this.sharedRuleKeys = Set.copyOf(sharedRuleKeys);
        this.limiter = limiter;
        this.answers = answers;
        this.metrics = metrics;
    }

    /**
     * Answers a whole request body. The stage completes exceptionally only if the limiter itself fails (a
     * bug), which is answered with a 500.
     */
    CompletableFuture<Answer> answer(byte[] body) {
        return answer(body, Runnable::run, null);
    }

    /**
     * Answers a whole request body, rendering the answer on {@code renderer} once a decision that was not
     * made at once arrives (so that it is not rendered on the thread that reads the store's replies).
     *
     * @param caller the caller the request named where the file names callers, else null: every check must be
     *     one it may ask for, or the answer is 403 and nothing is decided
     */
    CompletableFuture<Answer> answer(byte[] body, Executor renderer, Callers.Caller caller) {
        try {
            return decide(body, renderer, caller);
        } catch (BadRequest bad) {
            return CompletableFuture.completedFuture(
                    Answer.of(RequestDecision.problem(bad.status(), bad.getMessage())));
        }
    }

    private CompletableFuture<Answer> decide(byte[] body, Executor renderer, Callers.Caller caller) throws BadRequest {
        CheckRequest request = CheckRequest.parse(body, policies);
        permit(caller, "check", request.checks());
        if (!request.batch()) {
            Check check = request.checks().get(0);
            CompletableFuture<Decision> decision = decide(check);
            return decision.thenApplyAsync(decided -> single(check, decided), answerer(decision, renderer));
        }
        List<Check> batch = request.checks();
        @SuppressWarnings("unchecked")
        CompletableFuture<Decision>[] decisions = new CompletableFuture[batch.size()];
        for (int i = 0; i < decisions.length; i++) {
            decisions[i] = decide(batch.get(i));
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(decisions);
        return all.thenApplyAsync(
                done -> Answer.json(200, Map.of("Cache-Control", "no-store"), JsonText.of(generator -> {
                    generator.writeStartObject();
                    generator.writeArrayFieldStart("results");
                    for (int i = 0; i < decisions.length; i++) {
                        result(generator, batch.get(i), decisions[i].join());
                    }
                    generator.writeEndArray();
                    generator.writeEndObject();
                })),
                answerer(all, renderer));
    }

    /**
     * The answer to one check: the status and header fields as for a proxied request; the decision as JSON,
     * or, when the limiter is unavailable, a problem that also carries the decision's fields.
     */
    private Answer single(Check check, Decision decision) {
        RequestDecision rendered = answers.respond(check.policy(), decision);
        Map<String, String> headers = new LinkedHashMap<>(rendered.headers());
        headers.put("Cache-Control", "no-store");
        String result = JsonText.of(generator -> result(generator, check, decision));
        if (!rendered.allowed() && decision.degraded() && decision.degradation().failsClosed()) {
            String problem = new String(rendered.body(), StandardCharsets.UTF_8);
            String merged = problem.substring(0, problem.length() - 1) + "," + result.substring(1);
            return new Answer(rendered.status(), headers, merged.getBytes(StandardCharsets.UTF_8));
        }
        headers.put("Content-Type", Answer.JSON); // as Answer.json would, without copying the fields again
        return new Answer(rendered.status(), headers, result.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Answers {@code POST /v1/charge}'s body: takes a cost known after the fact, {@code {"policy": "llm-tokens",
     * "key": "team-7", "cost": 2400}}, whatever the bucket holds (into debt if need be, no deeper than the policy's
     * maximum debt, so that the key's next checks are refused until it has refilled past the debt), and answers
     * 200 with what the bucket holds after it: {@code {"policy", "key", "charged", "remaining", "reset_after_ms",
     * "max_debt_reached"}}, the last true when the bucket is as deep in debt as the policy allows. Client errors as
     * for checks, and 403 for a key or policy {@code caller} may not charge. The answer is rendered on {@code
     * renderer} once a charge that was not made at once is; the stage never fails: a store that could not be
     * asked is a 503 problem, and nothing is charged.
     */
    CompletableFuture<Answer> charge(byte[] body, Executor renderer, Callers.Caller caller) {
        Check charge;
        try {
            charge = CheckRequest.parseCharge(body, policies);
            permit(caller, "charge", List.of(charge));
        } catch (BadRequest bad) {
            return CompletableFuture.completedFuture(
                    Answer.of(RequestDecision.problem(bad.status(), bad.getMessage())));
        }
        CompletableFuture<BucketState> charged;
        try {
            charged = limiter.chargeAsync(bucketKey(charge), charge.policy(), charge.cost())
                    .toCompletableFuture();
        } catch (RuntimeException e) {
            charged = CompletableFuture.failedFuture(e);
        }
        return charged.handleAsync(
                (state, failure) -> {
                    metrics.charged(charge.policy(), charge.cost(), failure == null);
                    if (failure != null) {
                        Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
                        LOG.log(System.Logger.Level.DEBUG, "a charge failed", cause);
                        return Answer.of(RequestDecision.problem(
                                503, "The charge could not be taken; nothing was charged: " + cause.getMessage()));
                    }
                    long resetAfter =
                            TimeUnit.NANOSECONDS.toMicros(state.untilFull().toNanos());
                    return Answer.json(200, Map.of("Cache-Control", "no-store"), JsonText.of(generator -> {
                        generator.writeStartObject();
                        generator.writeStringField("policy", charge.policy().name());
                        generator.writeStringField("key", charge.key());
                        generator.writeNumberField("charged", charge.cost());
                        generator.writeNumberField("remaining", state.tokens());
                        generator.writeNumberField("reset_after_ms", JsonText.ceilMillis(resetAfter));
                        generator.writeBooleanField("max_debt_reached", atMaxDebt(charge.policy(), state));
                        generator.writeEndObject();
                    }));
                },
                answerer(charged, renderer));
    }

    private CompletableFuture<Decision> decide(Check check) {
        CompletableFuture<Decision> decision;
        try {
            decision = limiter.tryAcquireAsync(bucketKey(check), check.policy(), check.cost())
                    .toCompletableFuture();
        } catch (RuntimeException e) {
            decision = CompletableFuture.failedFuture(e);
        }
        return decision.thenApply(decided -> {
            metrics.checked(check.policy(), decided);
            return decided;
        });
    }

    /**
     * Whether a limit's bucket is as deep in debt as the policy lets a charge take it: what a charge asked beyond
     * that was not taken.
     */
    static boolean atMaxDebt(Policy policy, BucketState state) {
        for (BucketState.LimitState limit : state.limits()) {
            long bound = TokenBucket.debtBound(limit.limit(), policy.maxDebtMicros());
            if (limit.untilFullMicros() >= TokenBucket.untilFullMicros(bound, limit.limit())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Checks that {@code caller} (null where the file names no callers) may ask for every one of {@code checks},
     * and counts the call as served or forbidden.
     *
     * @throws BadRequest 403, saying what the caller may not ask, for the first check it may not
     */
    private void permit(Callers.Caller caller, String api, List<Check> checks) throws BadRequest {
        if (caller == null) {
            return;
        }
        for (Check check : checks) {
            String forbidden = caller.forbids(check.policy(), check.key());
            if (forbidden != null) {
                metrics.callers().forbidden(caller, api, forbidden);
                throw new BadRequest(403, forbidden);
            }
        }
        metrics.callers().served(caller, api);
    }

    /** The key the bucket of {@code check} is kept under: apart from the rules' keys unless its policy shares them. */
    private String bucketKey(Check check) {
        return sharedRuleKeys.contains(check.policy().name()) ? check.key() : KEY_PREFIX + check.key();
    }

    private static void result(JsonGenerator generator, Check check, Decision decision) throws IOException {
        generator.writeStartObject();
        generator.writeBooleanField("allowed", decision.allowed());
        generator.writeStringField("policy", check.policy().name());
        generator.writeStringField("key", check.key());
        generator.writeNumberField("limit", decision.limit().capacity());
        generator.writeNumberField("remaining", decision.remaining());
        generator.writeNumberField("retry_after_ms", JsonText.ceilMillis(decision.retryAfterMicros()));
        generator.writeNumberField("reset_after_ms", JsonText.ceilMillis(decision.resetAfterMicros()));
        generator.writeBooleanField("degraded", decision.degraded());
        generator.writeEndObject();
    }

    /**
     * Returns where to go on once {@code pending} completes: this thread if it already has (a decision made in
     * memory, or by the deny cache), else {@code renderer}. A Redis decision completes on the one thread that
     * reads Redis's replies; rendering every answer there would make it the server's bottleneck.
     */
    private static Executor answerer(CompletableFuture<?> pending, Executor renderer) {
        return pending.isDone() ? Runnable::run : renderer;
    }
}
