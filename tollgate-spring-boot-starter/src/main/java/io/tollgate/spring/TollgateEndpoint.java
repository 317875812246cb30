package io.tollgate.spring;

import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.RequestLimiterConfig;
import io.tollgate.http.internal.AdminViews;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The Actuator endpoint {@code tollgate}, as the server's admin API: {@code GET /actuator/tollgate} (the
 * policies and rules in {@code tollgate.*}'s own words, and the limiter), {@code GET
 * /actuator/tollgate/{policy}/{key}} (what the key's buckets hold, without taking anything) and {@code DELETE
 * /actuator/tollgate/{policy}/{key}} (forget them: the next request finds full buckets). An unknown policy is
 * 404. The key is the bucket's key: for a rule, as the rule names its source, such as {@code
 * header:x-api-key:k-123} (see docs/http.md). Expose it as any endpoint ({@code
 * management.endpoints.web.exposure.include=tollgate}); it is off the web until then. Thread-safe.
 */
@Endpoint(id = "tollgate")
public class TollgateEndpoint {

    private final Supplier<LiveRules.Rules> rules;
    private final RateLimiter limiter;

    /** Shows and changes what {@code limiter} holds for the policies of {@code config}. */
    public TollgateEndpoint(RequestLimiterConfig config, RequestLimiter requests, RateLimiter limiter) {
        this(() -> new LiveRules.Rules(config, requests), limiter);
    }

    /** Shows and changes what {@code limiter} holds for the rules in force. */
    TollgateEndpoint(Supplier<LiveRules.Rules> rules, RateLimiter limiter) {
        this.rules = rules;
        this.limiter = limiter;
    }

    /** Returns the limiter, the policies and the rules. */
    @ReadOperation
    public Map<String, Object> policies() {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("limiter", limiter.toString());
        view.putAll(AdminViews.policies(policiesByName(), rules.get().requests().rules()));
        return view;
    }

    /**
     * Returns what the key's buckets hold, or null (404) for an unknown policy.
     *
     * @throws IllegalStateException if the store cannot answer within its time budget, saying why
     */
    @ReadOperation
    public Map<String, Object> bucket(@Selector String policy, @Selector String key) {
        Policy known = policiesByName().get(policy);
        if (known == null) {
            return null;
        }
        return AdminViews.bucket(limiter, known, key);
    }

    /**
     * Forgets the key's buckets; returns what they hold now (full), or null (404) for an unknown policy.
     *
     * @throws IllegalStateException if the store cannot answer within its time budget, saying why
     */
    @DeleteOperation
    public Map<String, Object> reset(@Selector String policy, @Selector String key) {
        Policy known = policiesByName().get(policy);
        if (known == null) {
            return null;
        }
        limiter.reset(key, known);
        return AdminViews.bucket(limiter, known, key);
    }

    private Map<String, Policy> policiesByName() {
        Map<String, Policy> byName = new LinkedHashMap<>();
        for (Policy policy : rules.get().config().policies()) {
            byName.put(policy.name(), policy);
        }
        return byName;
    }
}
