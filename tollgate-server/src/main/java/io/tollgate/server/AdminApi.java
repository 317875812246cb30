package io.tollgate.server;

import io.tollgate.LimiterArguments;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import io.tollgate.RateLimiter;
import io.tollgate.http.AdminViews;
import io.tollgate.server.CheckApi.Answer;
import io.tollgate.top.HeavyHitters;
import io.tollgate.top.KeyDisplay;
import io.tollgate.top.TopKey;
import io.tollgate.top.TopKeys;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The admin API of the management port: {@code GET /admin/policies} (the running policies and rules, in the
 * configuration's own vocabulary), {@code POST /admin/reload} (read the configuration file again, see {@link
 * ConfigReloader}), {@code GET /admin/top?policy=P&by=refused|charged&window=1m|15m&limit=N} (the keys refused or
 * charged most, see {@link HeavyHitters}), {@code GET /admin/buckets/{policy}/{key}} (what the key's buckets hold,
 * without taking anything) and {@code DELETE /admin/buckets/{policy}/{key}} (forget them: the next request
 * finds full buckets). The key is the bucket's key: the decision API's key as the client sent it, or a
 * rule's key as it names its source ({@code ip:203.0.113.7}, {@code header:x-api-key:KEY}), percent-encoded
 * in the path, or, for a key {@code /admin/top} lists, {@code /admin/buckets/{policy}?digest=D} with the digest it
 * shows (the key stays unshown). {@code GET /admin/rates} and {@code GET /admin/store} feed the management page
 * ({@link LiveViews}). Errors are RFC 9457 problems: an unknown policy 404, a bad key 400, a store that cannot answer
 * 503. Thread-safe.
 */
final class AdminApi {

    static final String BUCKETS = "/admin/buckets/";
    static final String POLICIES = "/admin/policies";
    static final String RELOAD = "/admin/reload";
    static final String TOP = "/admin/top";
    static final String RATES = "/admin/rates";
    static final String STORE = "/admin/store";

    /** The most keys {@code /admin/top} lists. */
    static final int MAX_TOP = 100;

    private static final Map<String, String> NO_STORE = Map.of("Cache-Control", "no-store");

    private static final String NOT_COUNTED = "This server does not count who it limits: set top-keys.enabled to"
            + " true (it costs each decision an update of a summary; see docs/benchmarks.md).";

    private final Supplier<ServerConfig> config;
    private final RateLimiter limiter;
    private final String store;
    private final ConfigReloader reloader;
    private final TopKeys counts;
    private final KeyDisplay display;
    private final LiveViews live;

    /**
     * @param config the running configuration, read on every call
     * @param store how the store describes itself, such as {@code memory}
     * @param counts who the servers limit, or null when {@code top-keys.enabled} is off
     * @param display how {@code /admin/top} shows keys
     * @param live the views of the management page: rates and the store's state
     */
    AdminApi(
            Supplier<ServerConfig> config,
            RateLimiter limiter,
            String store,
            ConfigReloader reloader,
            TopKeys counts,
            KeyDisplay display,
            LiveViews live) {
        this.config = config;
        this.limiter = limiter;
        this.store = store;
        this.reloader = reloader;
        this.counts = counts;
        this.display = display;
        this.live = live;
    }

    /** Whether {@code path} is one of this API's. */
    static boolean serves(String path) {
        return path.equals(POLICIES)
                || path.equals(RELOAD)
                || path.equals(TOP)
                || path.equals(RATES)
                || path.equals(STORE)
                || path.startsWith(BUCKETS);
    }

    /**
     * Answers {@code method} on {@code path}, the path as the client sent it (still percent-encoded), with the
     * parameters of its query. May wait for the store, within its time budget: call it where a thread may block,
     * never on an event loop.
     */
    Answer answer(String method, String path, Map<String, List<String>> query) {
        if (path.equals(TOP)) {
            return method.equals("GET") || method.equals("HEAD")
                    ? top(query)
                    : Answer.methodNotAllowed(path, method, "GET", "HEAD");
        }
        if (path.equals(RATES) || path.equals(STORE)) {
            if (!(method.equals("GET") || method.equals("HEAD"))) {
                return Answer.methodNotAllowed(path, method, "GET", "HEAD");
            }
            return path.equals(RATES) ? live.rates() : live.store();
        }
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
        String digest = parameter(query, "digest", null);
        BucketAddress address;
        try {
            address = digest == null
                    ? BucketAddress.parse(
                            path.substring(BUCKETS.length()), config.get().policies())
                    : listed(path.substring(BUCKETS.length()), digest);
        } catch (CheckRequest.BadRequest bad) {
            return Answer.problem(bad.status(), bad.getMessage());
        }
        try {
            if (method.equals("DELETE")) {
                return resetAnswer(limiter.reset(address.key(), address.policy()));
            }
            Map<String, Object> bucket =
                    new LinkedHashMap<>(AdminViews.bucket(limiter, address.policy(), address.key()));
            if (digest != null) {
                bucket.put("key", display.show(address.key())); // named by its digest: shown as /admin/top shows it
                bucket.put("digest", digest);
            }
            return Answer.json(200, NO_STORE, JsonText.ofValue(bucket));
        } catch (IllegalStateException e) {
            return Answer.problem(503, "The store cannot answer: " + e.getMessage());
        }
    }

    /**
     * 204 once every other live instance confirmed the reset; else 202 (the store has it, and those instances refuse
     * the key from what they remember at most until their deny cache's ceiling), naming them.
     */
    private static Answer resetAnswer(Propagation propagation) {
        if (propagation.complete()) {
            return new Answer(204, NO_STORE, new byte[0]);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put(
                "detail",
                "The buckets were reset in the store, but "
                        + propagation.unconfirmed().size()
                        + " of the other live instances did not confirm in time that they forgot what they remembered"
                        + " of the key; they may refuse it from their deny cache until its ceiling.");
        body.put("confirmed_instances", propagation.confirmed());
        body.put("unconfirmed_instances", propagation.unconfirmed());
        return Answer.json(202, NO_STORE, JsonText.ofValue(body));
    }

    /**
     * Reads {@code policy?digest=D}: the key of the policy that {@code /admin/top} lists with that digest, so
     * that a key shown masked can be inspected and reset without being shown whole. 409 when keys are not
     * counted, 404 for an unknown policy or a digest of no listed key, 400 for a path that names a key too.
     */
    private BucketAddress listed(String rest, String digest) throws CheckRequest.BadRequest {
        if (counts == null) {
            throw new CheckRequest.BadRequest(409, NOT_COUNTED);
        }
        if (rest.isEmpty() || rest.contains("/")) {
            throw new CheckRequest.BadRequest(
                    400,
                    "Name the key by its path, " + BUCKETS + "{policy}/{key}, or by the digest /admin/top lists, "
                            + BUCKETS + "{policy}?digest=D, not both.");
        }
        Policy policy =
                CheckRequest.policy(BucketAddress.decode(rest), config.get().policies());
        String key = counts.keyOf(policy.name(), digest)
                .orElseThrow(() -> new CheckRequest.BadRequest(
                        404,
                        "No key of policy " + policy.name() + " that " + TOP + " lists has the digest '" + digest
                                + "' (the summaries keep the heaviest keys of the last 15 minutes)."));
        return new BucketAddress(policy, key);
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
            return new BucketAddress(policy, LimiterArguments.boundedKey(key));
        }

        static String decode(String text) throws CheckRequest.BadRequest {
            try {
                return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new CheckRequest.BadRequest(400, "The path is not percent-encoded correctly: " + text);
            }
        }
    }

    /**
     * The keys of a policy refused or charged most in a window: 400 for a missing or bad parameter, 404 for an
     * unknown policy.
     */
    private Answer top(Map<String, List<String>> query) {
        if (counts == null) {
            return Answer.problem(409, NOT_COUNTED);
        }
        Map<String, Policy> policies = config.get().policies();
        String name = parameter(query, "policy", null);
        if (name == null) {
            return Answer.problem(
                    400,
                    "The parameter policy is required; policies: "
                            + String.join(", ", new TreeSet<>(policies.keySet())));
        }
        HeavyHitters.Measure by;
        HeavyHitters.Window window;
        int limit;
        try {
            Policy policy = CheckRequest.policy(name, policies);
            by = HeavyHitters.Measure.of(parameter(query, "by", "refused"));
            window = HeavyHitters.Window.of(parameter(query, "window", "1m"));
            limit = limit(parameter(query, "limit", "10"));
            name = policy.name();
        } catch (CheckRequest.BadRequest bad) {
            return Answer.problem(bad.status(), bad.getMessage());
        } catch (IllegalArgumentException bad) {
            return Answer.problem(400, "The parameter " + bad.getMessage() + ".");
        }
        TopKeys.Merged merged = counts.top(name, by, window, limit);
        HeavyHitters.Report report = merged.report();
        return Answer.json(200, NO_STORE, JsonText.of(generator -> {
            generator.writeStartObject();
            generator.writeStringField("policy", report.policy());
            generator.writeStringField("by", report.by().text());
            generator.writeStringField("window", report.window().text());
            generator.writeNumberField("total", report.total());
            generator.writeNumberField("error_bound", report.errorBound());
            generator.writeNumberField("capacity", counts.capacity());
            generator.writeStringField("keys_shown", display.name().toLowerCase(Locale.ROOT));
            generator.writeNumberField("instances", report.instances());
            if (merged.unshared() != null) {
                generator.writeStringField(
                        "detail",
                        "This server's counts only: the other servers' could not be read: " + merged.unshared());
            }
            generator.writeArrayFieldStart("keys");
            for (TopKey key : report.keys()) {
                generator.writeStartObject();
                generator.writeStringField("key", display.show(key.key()));
                generator.writeStringField("digest", KeyDisplay.digest(key.key()));
                generator.writeNumberField("count", key.count());
                generator.writeNumberField("error", key.error());
                generator.writeEndObject();
            }
            generator.writeEndArray();
            generator.writeEndObject();
        }));
    }

    private static String parameter(Map<String, List<String>> query, String name, String absent) {
        List<String> values = query.get(name);
        return values == null || values.isEmpty() ? absent : values.get(values.size() - 1);
    }

    private static int limit(String text) {
        try {
            int limit = Integer.parseInt(text);
            if (limit >= 1 && limit <= MAX_TOP) {
                return limit;
            }
        } catch (NumberFormatException e) {
            // named below
        }
        throw new IllegalArgumentException("limit must be 1 to " + MAX_TOP + ", was '" + text + "'");
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
