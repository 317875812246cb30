package io.tollgate.server;

import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.http.internal.AdminViews;
import io.tollgate.internal.Arguments;
import io.tollgate.server.CheckApi.Answer;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The admin API of the management port: {@code GET /admin/policies} (the running policies and rules, in the
 * configuration's own vocabulary), {@code POST /admin/reload} (read the configuration file again, see {@link
 * ConfigReloader}), {@code GET /admin/buckets/{policy}/{key}} (what the key's buckets hold,
 * without taking anything) and {@code DELETE /admin/buckets/{policy}/{key}} (forget them: the next request
 * finds full buckets). The key is the bucket's key: the decision API's key as the client sent it, or a
 * rule's key as it names its source ({@code ip:203.0.113.7}, {@code header:x-api-key:KEY}), percent-encoded
 * in the path. Errors are RFC 9457 problems: an unknown policy 404, a bad key 400, a store that cannot answer
 * 503. Thread-safe.
 */
final class AdminApi {

    static final String BUCKETS = "/admin/buckets/";
    static final String POLICIES = "/admin/policies";
    static final String RELOAD = "/admin/reload";

    private static final Map<String, String> NO_STORE = Map.of("Cache-Control", "no-store");

    private final Supplier<ServerConfig> config;
    private final RateLimiter limiter;
    private final String store;
    private final ConfigReloader reloader;

    /**
     * @param config the running configuration, read on every call
     * @param store how the store describes itself, such as {@code memory}
     */
    AdminApi(Supplier<ServerConfig> config, RateLimiter limiter, String store, ConfigReloader reloader) {
        this.config = config;
        this.limiter = limiter;
        this.store = store;
        this.reloader = reloader;
    }

    /** Whether {@code path} is one of this API's. */
    static boolean serves(String path) {
        return path.equals(POLICIES) || path.equals(RELOAD) || path.startsWith(BUCKETS);
    }

    /**
     * Answers {@code method} on {@code path}, the path as the client sent it (still percent-encoded). May wait
     * for the store, within its time budget: call it where a thread may block, never on an event loop.
     */
    Answer answer(String method, String path) {
        if (path.equals(RELOAD)) {
            return method.equals("POST") ? reload() : Answer.methodNotAllowed(path, method, "POST");
        }
        if (path.equals(POLICIES)) {
            return method.equals("GET") || method.equals("HEAD")
                    ? Answer.json(200, NO_STORE, policies(config.get()))
                    : Answer.methodNotAllowed(path, method, "GET", "HEAD");
        }
        if (!(method.equals("GET") || method.equals("HEAD") || method.equals("DELETE"))) {
            return Answer.methodNotAllowed(path, method, "GET", "DELETE", "HEAD");
        }
        BucketAddress address;
        try {
            address = BucketAddress.parse(
                    path.substring(BUCKETS.length()), config.get().policies());
        } catch (CheckRequest.BadRequest bad) {
            return Answer.problem(bad.status(), bad.getMessage());
        }
        try {
            if (method.equals("DELETE")) {
                limiter.reset(address.key(), address.policy());
                return new Answer(204, NO_STORE, new byte[0]);
            }
            return Answer.json(
                    200, NO_STORE, JsonText.ofValue(AdminViews.bucket(limiter, address.policy(), address.key())));
        } catch (IllegalStateException e) {
            return Answer.problem(503, "The store cannot answer: " + e.getMessage());
        }
    }

    /**
     * Reloads the configuration file: 200 with what changed, 409 when the server was not started from a
     * file, 422 with the file's error when it is invalid (the running configuration stays).
     */
    private Answer reload() {
        if (!reloader.canReload()) {
            return Answer.problem(409, "This server was not started from a configuration file.");
        }
        ConfigReloader.Result result = reloader.reload("POST " + RELOAD);
        if (!result.reloaded()) {
            return Answer.problem(422, "The configuration was not reloaded; the running one stays: " + result.detail());
        }
        return Answer.json(200, NO_STORE, JsonText.of(generator -> {
            generator.writeStartObject();
            generator.writeBooleanField("reloaded", true);
            generator.writeStringField("detail", result.detail());
            generator.writeArrayFieldStart("restart_required");
            for (String setting : result.restartRequired()) {
                generator.writeString(setting);
            }
            generator.writeEndArray();
            generator.writeEndObject();
        }));
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
            Policy policy = CheckRequest.policy(name, policies);
            if (key.length() > CheckRequest.MAX_KEY_FIELD_LENGTH) {
                throw new CheckRequest.BadRequest(
                        400, "The key is longer than " + CheckRequest.MAX_KEY_FIELD_LENGTH + " characters.");
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

    private String policies(ServerConfig running) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("store", store);
        if (running.upstream() != null) {
            view.put("upstream", running.upstream().toString());
        }
        view.putAll(AdminViews.policies(running.policies(), running.rules()));
        return JsonText.ofValue(view);
    }
}
