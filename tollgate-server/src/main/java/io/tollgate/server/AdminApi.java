package io.tollgate.server;

import io.tollgate.BucketState;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.http.Rule;
import io.tollgate.internal.Arguments;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Supplier;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The admin API of the management port: {@code GET /admin/policies} (the running policies and rules, in the
 * configuration's own vocabulary), {@code GET /admin/buckets/{policy}/{key}} (what the key's buckets hold,
 * without taking anything) and {@code DELETE /admin/buckets/{policy}/{key}} (forget them: the next request
 * finds full buckets). The key is the one the rules use, such as a client IP or an API key, percent-encoded
 * in the path. Errors are RFC 9457 problems: an unknown policy 404, a bad key 400, a store that cannot answer
 * 503. Thread-safe.
 */
final class AdminApi {

    static final String BUCKETS = "/admin/buckets/";
    static final String POLICIES = "/admin/policies";

    private final Supplier<ServerConfig> config;
    private final RateLimiter limiter;
    private final String store;

    /**
     * @param config the running configuration, read on every call
     * @param store how the store describes itself, such as {@code memory}
     */
    AdminApi(Supplier<ServerConfig> config, RateLimiter limiter, String store) {
        this.config = config;
        this.limiter = limiter;
        this.store = store;
    }

    /** Whether {@code path} is one of this API's. */
    static boolean serves(String path) {
        return path.equals(POLICIES) || path.startsWith(BUCKETS);
    }

    void handle(String path, Request request, Response response, Callback callback) {
        if (path.equals(POLICIES)) {
            if (request.getMethod().equals("GET") || request.getMethod().equals("HEAD")) {
                Responses.json(response, callback, 200, Map.of("Cache-Control", "no-store"), policies(config.get()));
            } else {
                Responses.methodNotAllowed(request, response, callback, "GET", "HEAD");
            }
            return;
        }
        String method = request.getMethod();
        if (!(method.equals("GET") || method.equals("HEAD") || method.equals("DELETE"))) {
            Responses.methodNotAllowed(request, response, callback, "GET", "DELETE", "HEAD");
            return;
        }
        BucketAddress address;
        try {
            address = BucketAddress.parse(
                    path.substring(BUCKETS.length()), config.get().policies());
        } catch (CheckRequest.BadRequest bad) {
            Responses.problem(response, callback, bad.status(), bad.getMessage());
            return;
        }
        // The store answers within its time budget, so a request thread may wait for it.
        try {
            if (method.equals("DELETE")) {
                limiter.reset(address.key(), address.policy());
                Responses.write(response, callback, 204, Map.of("Cache-Control", "no-store"), new byte[0]);
            } else {
                BucketState state = limiter.inspect(address.key(), address.policy());
                Responses.json(response, callback, 200, Map.of("Cache-Control", "no-store"), bucket(address, state));
            }
        } catch (IllegalStateException e) {
            Responses.problem(response, callback, 503, "The store cannot answer: " + e.getMessage());
        }
    }

    /** A policy and a client key, as the path names them. */
    record BucketAddress(Policy policy, String key) {

        /** Reads {@code policy/key}, the key percent-encoded; 404 for an unknown policy, 400 for a bad path. */
        static BucketAddress parse(String rest, Map<String, Policy> policies) throws CheckRequest.BadRequest {
            int slash = rest.indexOf('/');
            if (slash <= 0 || slash == rest.length() - 1) {
                throw new CheckRequest.BadRequest(
                        400, "The path must be " + BUCKETS + "{policy}/{key}, with the key percent-encoded.");
            }
            String name = decode(rest.substring(0, slash));
            String key = decode(rest.substring(slash + 1));
            Policy policy = policies.get(name);
            if (policy == null) {
                throw new CheckRequest.BadRequest(
                        404,
                        "unknown policy '" + name + "'; defined: "
                                + String.join(", ", new java.util.TreeSet<>(policies.keySet())));
            }
            if (key.length() > CheckRequest.MAX_KEY_LENGTH) {
                throw new CheckRequest.BadRequest(
                        400, "The key is longer than " + CheckRequest.MAX_KEY_LENGTH + " characters.");
            }
            return new BucketAddress(policy, Arguments.boundedKey(key));
        }

        private static String decode(String text) throws CheckRequest.BadRequest {
            try {
                return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new CheckRequest.BadRequest(400, "The path is not percent-encoded correctly: " + text);
            }
        }
    }

    private String bucket(BucketAddress address, BucketState state) {
        return JsonText.of(generator -> {
            generator.writeStartObject();
            generator.writeStringField("policy", address.policy().name());
            generator.writeStringField("key", address.key());
            generator.writeNumberField("remaining", state.tokens());
            generator.writeNumberField("retry_after_ms", JsonText.ceilMillis(retryAfterMicros(state)));
            generator.writeNumberField(
                    "reset_after_ms", JsonText.ceilMillis(state.untilFull().toNanos() / 1_000));
            generator.writeArrayFieldStart("limits");
            for (BucketState.LimitState limit : state.limits()) {
                generator.writeStartObject();
                generator.writeNumberField("limit", limit.limit().capacity());
                generator.writeStringField("refill", limit.limit().refill().toString());
                generator.writeNumberField("remaining", limit.tokens());
                generator.writeNumberField("retry_after_ms", JsonText.ceilMillis(retryAfterMicros(limit)));
                generator.writeNumberField("reset_after_ms", JsonText.ceilMillis(limit.untilFullMicros()));
                generator.writeEndObject();
            }
            generator.writeEndArray();
            generator.writeEndObject();
        });
    }

    /** How long until a request of one token would pass every limit, in µs. */
    private static long retryAfterMicros(BucketState state) {
        long longest = 0;
        for (BucketState.LimitState limit : state.limits()) {
            longest = Math.max(longest, retryAfterMicros(limit));
        }
        return longest;
    }

    /**
     * How long until the bucket holds one token: it is full after {@code untilFull}, and the last {@code
     * capacity - 1} tokens take their refill time before that.
     */
    private static long retryAfterMicros(BucketState.LimitState state) {
        if (state.tokens() >= 1) {
            return 0;
        }
        Limit limit = state.limit();
        double microsPerToken =
                (double) limit.refill().ticksPerToken() / limit.refill().ticksPerMicrosecond();
        return Math.max(0, state.untilFullMicros() - (long) ((limit.capacity() - 1) * microsPerToken));
    }

    private String policies(ServerConfig running) {
        return JsonText.of(generator -> {
            generator.writeStartObject();
            generator.writeStringField("store", store);
            if (running.upstream() != null) {
                generator.writeStringField("upstream", running.upstream().toString());
            }
            generator.writeObjectFieldStart("policies");
            for (Policy policy : new java.util.TreeMap<>(running.policies()).values()) {
                generator.writeObjectFieldStart(policy.name());
                generator.writeArrayFieldStart("limits");
                for (Limit limit : policy.limits()) {
                    generator.writeStartObject();
                    generator.writeNumberField("capacity", limit.capacity());
                    generator.writeStringField("refill", limit.refill().toString());
                    generator.writeNumberField("initial-tokens", limit.initialTokens());
                    generator.writeEndObject();
                }
                generator.writeEndArray();
                generator.writeEndObject();
            }
            generator.writeEndObject();
            generator.writeArrayFieldStart("rules");
            for (Rule rule : running.rules()) {
                generator.writeStartObject();
                generator.writeStringField("path", rule.path().toString());
                if (!rule.methods().isEmpty()) {
                    generator.writeArrayFieldStart("methods");
                    for (String method : new java.util.TreeSet<>(rule.methods())) {
                        generator.writeString(method);
                    }
                    generator.writeEndArray();
                }
                if (rule.host() != null) {
                    generator.writeStringField("host", rule.host());
                }
                if (rule.requiredHeader() != null) {
                    generator.writeStringField("require-header", rule.requiredHeader());
                }
                generator.writeStringField("key", rule.key().describe());
                generator.writeStringField("policy", rule.policy().name());
                generator.writeNumberField("cost", rule.cost());
                generator.writeBooleanField("dry-run", rule.dryRun());
                generator.writeEndObject();
            }
            generator.writeEndArray();
            generator.writeEndObject();
        });
    }
}
