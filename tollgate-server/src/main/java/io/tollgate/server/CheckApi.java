package io.tollgate.server;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import io.tollgate.http.RuleOutcome;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The decision API, {@code POST /v1/check}: takes {@code {"policy": "per-client", "key": "alice", "cost": 1}}
 * and answers 200 when the request is allowed and 429 when it is refused (or the configured refusal
 * status), with the decision as JSON and the same rate-limit header fields as proxied responses, rendered by
 * the same {@link RequestLimiter}. A request refused because the store could not decide and the failure
 * policy is {@code deny} is answered 503 (or the configured status) with an RFC 9457 problem that says the
 * limiter is unavailable and also carries the decision's fields. {@code {"checks": [...]}} decides up to
 * {@value #MAX_CHECKS} such requests in one round trip, each on its own, and answers 200 with their {@code
 * results} in order.
 *
 * <p>Client errors are RFC 9457 problems: malformed JSON, a missing, unknown or wrong-typed field, a cost out
 * of range or a key longer than {@value #MAX_KEY_LENGTH} characters get 400, an unknown policy 404, a body
 * over {@value #MAX_BODY_BYTES} bytes 413, another method than POST 405. After a 413 the rest of the body is
 * read and thrown away, up to {@value #LINGER_MAX_BYTES} bytes and {@value #LINGER_MAX_SECONDS} seconds, as
 * nginx's lingering close does, so that a client that writes its whole body before reading gets the 413
 * rather than a broken pipe; then the connection is closed. Thread-safe.
 */
final class CheckApi {

    /** The largest request body, in bytes. */
    static final int MAX_BODY_BYTES = 64 * 1024;

    /** The longest key, in characters. */
    static final int MAX_KEY_LENGTH = 1024;

    /** The most checks in one batch. */
    static final int MAX_CHECKS = 100;

    /** The most bytes of a refused body read and thrown away after a 413. */
    static final long LINGER_MAX_BYTES = 32L * 1024 * 1024;

    /** The longest a refused body is read and thrown away after a 413, in seconds. */
    static final long LINGER_MAX_SECONDS = 5;

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    private final Map<String, Policy> policies;
    private final RateLimiter limiter;
    private final RequestLimiter answers;
    private final ServerMetrics metrics;
    private final Map<Policy, Rule> rules = new ConcurrentHashMap<>();
    private final JsonFactory json = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(8)
                    .maxStringLength(MAX_BODY_BYTES)
                    .build())
            .build();

    /** One request for tokens. */
    private record Check(Policy policy, String key, long cost) {}

    /** What to answer a request: the status, the header fields, Content-Type included, and the body. */
    record Answer(int status, Map<String, String> headers, byte[] body) {

        static Answer of(RequestDecision decision) {
            return new Answer(decision.status(), decision.headers(), decision.body());
        }

        static Answer json(int status, Map<String, String> headers, String json) {
            Map<String, String> withType = new LinkedHashMap<>(headers);
            withType.put("Content-Type", Responses.JSON);
            return new Answer(status, withType, json.getBytes(StandardCharsets.UTF_8));
        }
    }

    /** A request that cannot be decided, and the status and detail it is answered with. */
    private static final class BadRequest extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;

        BadRequest(int status, String detail) {
            super(detail, null, false, false);
            this.status = status;
        }
    }

    /**
     * @param answers renders the status and header fields of every decision, as for proxied requests (its
     *     rules are not used)
     */
    CheckApi(Map<String, Policy> policies, RateLimiter limiter, RequestLimiter answers, ServerMetrics metrics) {
        this.policies = Map.copyOf(policies);
        this.limiter = limiter;
        this.answers = answers;
        this.metrics = metrics;
    }

    void handle(Request request, Response response, Callback callback) {
        if (!request.getMethod().equals("POST")) {
            Responses.methodNotAllowed(request, response, callback, "POST");
            return;
        }
        if (request.getLength() > MAX_BODY_BYTES) {
            tooLarge(request, response, callback);
            return;
        }
        read(request, new ByteArrayOutputStream(), response, callback);
    }

    /**
     * Answers a whole request body. The stage completes exceptionally only if the limiter itself fails (a
     * bug), which is answered with a 500.
     */
    CompletableFuture<Answer> answer(byte[] body) {
        try {
            return decide(body);
        } catch (BadRequest bad) {
            return CompletableFuture.completedFuture(Answer.of(RequestDecision.problem(bad.status, bad.getMessage())));
        }
    }

    /**
     * Reads the body as it arrives, without holding a thread while waiting for it, and decides once it is
     * all there; a body that grows past {@value #MAX_BODY_BYTES} bytes is answered 413 at once.
     */
    private void read(Request request, ByteArrayOutputStream body, Response response, Callback callback) {
        while (true) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                request.demand(() -> read(request, body, response, callback));
                return;
            }
            if (Content.Chunk.isFailure(chunk)) {
                callback.failed(chunk.getFailure()); // the client went away while sending
                return;
            }
            ByteBuffer buffer = chunk.getByteBuffer();
            boolean tooLarge = body.size() + buffer.remaining() > MAX_BODY_BYTES;
            if (!tooLarge) {
                byte[] bytes = new byte[buffer.remaining()];
                buffer.get(bytes);
                body.writeBytes(bytes);
            }
            chunk.release();
            if (tooLarge) {
                tooLarge(request, response, callback);
                return;
            }
            if (chunk.isLast()) {
                answer(body.toByteArray()).whenComplete((answer, failure) -> {
                    if (failure != null) {
                        Responses.limiterFailed(response, callback, failure);
                    } else {
                        Responses.write(response, callback, answer.status(), answer.headers(), answer.body());
                    }
                });
                return;
            }
        }
    }

    private CompletableFuture<Answer> decide(byte[] body) throws BadRequest {
        Map<String, Object> fields = parse(body);
        Object checks = fields.remove("checks");
        if (checks == null) {
            Check check = check(fields, "");
            return decide(check).thenApply(decision -> single(check, decision));
        }
        if (!fields.isEmpty()) {
            throw new BadRequest(
                    400,
                    "give either checks or policy, key and cost, not both; found "
                            + String.join(", ", fields.keySet()));
        }
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> elements = (List<Map<String, Object>>) checks;
        if (elements.isEmpty() || elements.size() > MAX_CHECKS) {
            throw new BadRequest(400, "checks must hold 1 to " + MAX_CHECKS + " checks, has " + elements.size());
        }
        List<Check> batch = new ArrayList<>(elements.size());
        for (int i = 0; i < elements.size(); i++) {
            batch.add(check(elements.get(i), "checks[" + i + "]."));
        }
        @SuppressWarnings("unchecked")
        CompletableFuture<Decision>[] decisions = new CompletableFuture[batch.size()];
        for (int i = 0; i < decisions.length; i++) {
            decisions[i] = decide(batch.get(i));
        }
        return CompletableFuture.allOf(decisions)
                .thenApply(done -> Answer.json(200, Map.of("Cache-Control", "no-store"), write(generator -> {
                    generator.writeStartObject();
                    generator.writeArrayFieldStart("results");
                    for (int i = 0; i < decisions.length; i++) {
                        result(generator, batch.get(i), decisions[i].join());
                    }
                    generator.writeEndArray();
                    generator.writeEndObject();
                })));
    }

    /**
     * The answer to one check: the status and header fields as for a proxied request; the decision as JSON,
     * or, when the limiter is unavailable, a problem that also carries the decision's fields.
     */
    private Answer single(Check check, Decision decision) {
        Rule rule = rules.computeIfAbsent(
                check.policy(), policy -> Rule.builder(policy).build());
        RuleOutcome outcome = new RuleOutcome(rule, check.key(), decision);
        RequestDecision rendered = answers.respond(List.of(outcome));
        Map<String, String> headers = new LinkedHashMap<>(rendered.headers());
        headers.put("Cache-Control", "no-store");
        String result = write(generator -> result(generator, check, decision));
        if (outcome.limiterUnavailable()) {
            String problem = new String(rendered.body(), StandardCharsets.UTF_8);
            String merged = problem.substring(0, problem.length() - 1) + "," + result.substring(1);
            return new Answer(rendered.status(), headers, merged.getBytes(StandardCharsets.UTF_8));
        }
        return Answer.json(rendered.status(), headers, result);
    }

    private CompletableFuture<Decision> decide(Check check) {
        CompletableFuture<Decision> decision;
        try {
            decision = limiter.tryAcquireAsync(check.key(), check.policy(), check.cost())
                    .toCompletableFuture();
        } catch (RuntimeException e) {
            decision = CompletableFuture.failedFuture(e);
        }
        return decision.thenApply(decided -> {
            metrics.checked(check.policy(), decided);
            return decided;
        });
    }

    /** Reads the body: one JSON object of strings, whole numbers and, under {@code checks}, objects. */
    private Map<String, Object> parse(byte[] body) throws BadRequest {
        try (JsonParser parser = json.createParser(body)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new BadRequest(
                        400,
                        "the body must be a JSON object, such as {\"policy\": \"per-client\", \"key\": \"alice\", \"cost\": 1}");
            }
            Map<String, Object> fields = object(parser, "", true);
            if (parser.nextToken() != null) {
                throw new BadRequest(400, "the body must hold one JSON object and nothing after it");
            }
            return fields;
        } catch (JsonProcessingException e) {
            throw new BadRequest(400, "malformed JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException(e); // reading from an array does not fail
        }
    }

    private static Map<String, Object> object(JsonParser parser, String at, boolean top)
            throws IOException, BadRequest {
        Map<String, Object> fields = new LinkedHashMap<>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            switch (name) {
                case "policy", "key" -> {
                    if (value != JsonToken.VALUE_STRING) {
                        throw new BadRequest(400, at + name + " must be a string, was " + describe(value));
                    }
                    fields.put(name, parser.getText());
                }
                case "cost" -> {
                    if (value != JsonToken.VALUE_NUMBER_INT) {
                        throw new BadRequest(400, at + "cost must be a whole number, was " + describe(value));
                    }
                    if (parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                        throw new BadRequest(400, at + "cost " + parser.getText() + " is too large");
                    }
                    fields.put(name, parser.getLongValue());
                }
                case "checks" -> {
                    if (!top) {
                        throw new BadRequest(400, at + "checks cannot be nested");
                    }
                    if (value != JsonToken.START_ARRAY) {
                        throw new BadRequest(400, "checks must be an array of checks, was " + describe(value));
                    }
                    List<Map<String, Object>> checks = new ArrayList<>();
                    while (parser.nextToken() != JsonToken.END_ARRAY) {
                        String element = "checks[" + checks.size() + "].";
                        if (parser.currentToken() != JsonToken.START_OBJECT) {
                            throw new BadRequest(
                                    400,
                                    element.substring(0, element.length() - 1) + " must be an object, was "
                                            + describe(parser.currentToken()));
                        }
                        if (checks.size() == MAX_CHECKS) {
                            throw new BadRequest(400, "checks must hold 1 to " + MAX_CHECKS + " checks, has more");
                        }
                        checks.add(object(parser, element, false));
                    }
                    fields.put(name, checks);
                }
                default ->
                    throw new BadRequest(
                            400,
                            "unknown field " + at + name + "; a check has policy, key and cost"
                                    + (top ? ", or a batch has checks" : ""));
            }
        }
        return fields;
    }

    private Check check(Map<String, Object> fields, String at) throws BadRequest {
        String policyName = (String) fields.get("policy");
        if (policyName == null) {
            throw new BadRequest(400, at + "policy is required");
        }
        Policy policy = policies.get(policyName);
        if (policy == null) {
            throw new BadRequest(
                    404,
                    "unknown policy '" + policyName + "'; defined: "
                            + (policies.isEmpty()
                                    ? "none"
                                    : String.join(", ", new java.util.TreeSet<>(policies.keySet()))));
        }
        String key = (String) fields.get("key");
        if (key == null || key.isEmpty()) {
            throw new BadRequest(400, at + "key is required: a non-empty string that names the client");
        }
        if (key.length() > MAX_KEY_LENGTH) {
            throw new BadRequest(
                    400, at + "key is " + key.length() + " characters long; the most is " + MAX_KEY_LENGTH);
        }
        long cost = (Long) fields.getOrDefault("cost", 1L);
        try {
            policy.checkCost(cost);
        } catch (IllegalArgumentException e) {
            throw new BadRequest(400, at + e.getMessage());
        }
        return new Check(policy, key, cost);
    }

    private static void result(JsonGenerator generator, Check check, Decision decision) throws IOException {
        generator.writeStartObject();
        generator.writeBooleanField("allowed", decision.allowed());
        generator.writeStringField("policy", check.policy().name());
        generator.writeStringField("key", check.key());
        generator.writeNumberField("limit", decision.limit().capacity());
        generator.writeNumberField("remaining", decision.remaining());
        generator.writeNumberField("retry_after_ms", ceilMillis(decision.retryAfterMicros()));
        generator.writeNumberField("reset_after_ms", ceilMillis(decision.resetAfterMicros()));
        generator.writeBooleanField("degraded", decision.degraded());
        generator.writeEndObject();
    }

    private interface JsonWriting {
        void write(JsonGenerator generator) throws IOException;
    }

    private String write(JsonWriting writing) {
        StringWriter out = new StringWriter(160);
        try (JsonGenerator generator = json.createGenerator(out)) {
            writing.write(generator);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // writing to a string does not fail
        }
        return out.toString();
    }

    /**
     * Answers 413 and closes the connection, but first reads and throws away the rest of the body, within
     * bounds, so that a client still sending it reads the 413 instead of a reset connection.
     */
    private static void tooLarge(Request request, Response response, Callback callback) {
        response.getHeaders().put(HttpHeader.CONNECTION, "close");
        AtomicBoolean done = new AtomicBoolean();
        Callback once = Callback.from(
                () -> {
                    if (done.compareAndSet(false, true)) {
                        callback.succeeded();
                    }
                },
                failure -> {
                    if (done.compareAndSet(false, true)) {
                        callback.failed(failure);
                    }
                });
        Responses.problem(
                response,
                Callback.from(
                        () -> {
                            request.getComponents()
                                    .getScheduler()
                                    .schedule(once::succeeded, LINGER_MAX_SECONDS, TimeUnit.SECONDS);
                            discard(request, 0, done, once);
                        },
                        once::failed),
                413,
                "The body is larger than " + MAX_BODY_BYTES + " bytes; send fewer checks.");
    }

    /** Reads and throws away the body until its end, {@value #LINGER_MAX_BYTES} bytes, or {@code done}. */
    private static void discard(Request request, long discarded, AtomicBoolean done, Callback once) {
        long total = discarded;
        while (!done.get()) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                long sofar = total;
                request.demand(() -> discard(request, sofar, done, once));
                return;
            }
            if (Content.Chunk.isFailure(chunk)) {
                once.succeeded(); // the client went away: the 413 was all there was to say
                return;
            }
            total += chunk.remaining();
            chunk.release();
            if (chunk.isLast() || total >= LINGER_MAX_BYTES) {
                once.succeeded();
                return;
            }
        }
    }

    private static String describe(JsonToken token) {
        if (token == null) {
            return "nothing";
        }
        return switch (token) {
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            case START_ARRAY -> "an array";
            case START_OBJECT -> "an object";
            default -> token.asString();
        };
    }

    private static long ceilMillis(long micros) {
        return (micros + 999) / 1_000;
    }
}
