package io.tollgate.spring;

import io.tollgate.Policy;
import io.tollgate.Propagation;
import io.tollgate.RateLimiter;
import io.tollgate.http.AdminViews;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.RequestLimiterConfig;
import io.tollgate.top.HeavyHitters;
import io.tollgate.top.KeyDisplay;
import io.tollgate.top.TopKey;
import io.tollgate.top.TopKeys;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The Actuator endpoint {@code tollgate}, as the server's admin API: {@code GET /actuator/tollgate} (the
 * policies and rules in {@code tollgate.*}'s own words, and the limiter), {@code GET
 * /actuator/tollgate/top?policy=P&by=refused|charged&window=1m|15m&limit=N} (the keys the rules and {@code
 * @RateLimit} refused or charged most, as the server's {@code /admin/top}), {@code GET
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
    private final KeyCounts counts;

    /**
     * Shows and changes what {@code limiter} holds for the policies of {@code config}; who is limited is counted
     * only by the starter's own request limiter, so {@code top} answers 404 here.
     */
    public TollgateEndpoint(RequestLimiterConfig config, RequestLimiter requests, RateLimiter limiter) {
        this(() -> new LiveRules.Rules(config, requests), limiter, null);
    }

    /** Shows and changes what {@code limiter} holds for the rules in force, and who {@code counts} counted. */
    TollgateEndpoint(Supplier<LiveRules.Rules> rules, RateLimiter limiter, KeyCounts counts) {
        this.rules = rules;
        this.limiter = limiter;
        this.counts = counts;
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
     * Returns the keys of {@code policy} refused ({@code by=refused}, the default) or charged most ({@code
     * by=charged}) over the last minute ({@code window=1m}, the default) or 15 minutes ({@code 15m}), at most
     * {@code limit} (1 to 100, default 10), with their counts and the error bound; null (404) for another path
     * than {@code top} or an unknown policy.
     *
     * @throws InvalidEndpointRequestException (400) if the policy is missing or a parameter is bad, naming it
     */
    @ReadOperation
    public Map<String, Object> top(
            @Selector String view,
            @Nullable String policy,
            @Nullable String by,
            @Nullable String window,
            @Nullable Integer limit) {
        if (!view.equals("top") || counts == null) {
            return null;
        }
        if (counts.top() == null) {
            throw new InvalidEndpointRequestException(
                    "this application does not count who it limits: set tollgate.top-keys.enabled=true",
                    "top-keys is off");
        }
        Map<String, Policy> policies = policiesByName();
        if (policy == null) {
            throw new InvalidEndpointRequestException(
                    "the parameter policy is required; policies: "
                            + String.join(", ", new TreeSet<>(policies.keySet())),
                    "policy is required");
        }
        if (!policies.containsKey(policy)) {
            return null;
        }
        TopKeys.Merged merged;
        try {
            int keys = limit == null ? 10 : limit;
            if (keys < 1 || keys > 100) {
                throw new IllegalArgumentException("limit must be 1 to 100, was " + keys);
            }
            merged = counts.top()
                    .top(
                            policy,
                            HeavyHitters.Measure.of(by == null ? "refused" : by),
                            HeavyHitters.Window.of(window == null ? "1m" : window),
                            keys);
        } catch (IllegalArgumentException e) {
            throw new InvalidEndpointRequestException("the parameter " + e.getMessage(), e.getMessage());
        }
        HeavyHitters.Report report = merged.report();
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("policy", report.policy());
        answer.put("by", report.by().text());
        answer.put("window", report.window().text());
        answer.put("total", report.total());
        answer.put("error_bound", report.errorBound());
        answer.put("capacity", counts.top().capacity());
        answer.put("keys_shown", counts.show().name().toLowerCase(Locale.ROOT));
        answer.put("instances", report.instances());
        if (merged.unshared() != null) {
            answer.put(
                    "detail",
                    "This instance's counts only: the other instances' could not be read: " + merged.unshared());
        }
        List<Map<String, Object>> keys = new ArrayList<>();
        for (TopKey key : report.keys()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("key", counts.show().show(key.key()));
            entry.put("digest", KeyDisplay.digest(key.key()));
            entry.put("count", key.count());
            entry.put("error", key.error());
            keys.add(entry);
        }
        answer.put("keys", keys);
        return answer;
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
     * Forgets the key's buckets; returns what they hold now (full) and {@code unconfirmed_instances}: the other
     * instances sharing the store that did not confirm the reset in time (empty when it is in force everywhere), or
     * null (404) for an unknown policy.
     *
     * @throws IllegalStateException if the store cannot answer within its time budget, saying why
     */
    @DeleteOperation
    public Map<String, Object> reset(@Selector String policy, @Selector String key) {
        Policy known = policiesByName().get(policy);
        if (known == null) {
            return null;
        }
        Propagation propagation = limiter.reset(key, known);
        Map<String, Object> bucket = new LinkedHashMap<>(AdminViews.bucket(limiter, known, key));
        bucket.put("unconfirmed_instances", propagation.unconfirmed());
        return bucket;
    }

    private Map<String, Policy> policiesByName() {
        Map<String, Policy> byName = new LinkedHashMap<>();
        for (Policy policy : rules.get().config().policies()) {
            byName.put(policy.name(), policy);
        }
        return byName;
    }
}
