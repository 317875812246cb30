package io.tollgate.spring;

import io.tollgate.Policy;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.RequestLimiterConfig;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The policies and rules of {@code tollgate.*} in force, and the request limiter built from them: replaced
 * whole when Spring Cloud refreshes the environment ({@link TollgateRefresh}). Thread-safe.
 */
final class LiveRules implements RulesInForce {

    /** One configuration and its request limiter. */
    record Rules(RequestLimiterConfig config, RequestLimiter requests, Map<String, Policy> policies) {
        Rules(RequestLimiterConfig config, RequestLimiter requests) {
            this(config, requests, byName(config));
        }

        private static Map<String, Policy> byName(RequestLimiterConfig config) {
            Map<String, Policy> policies = new LinkedHashMap<>();
            config.policies().forEach(policy -> policies.put(policy.name(), policy));
            return Collections.unmodifiableMap(policies);
        }
    }

    private final List<Consumer<RequestLimiter>> listeners = new CopyOnWriteArrayList<>();
    private volatile Rules current;

    LiveRules(RequestLimiterConfig config, RequestLimiter requests) {
        this.current = new Rules(config, requests);
    }

    Rules current() {
        return current;
    }

    @Override
    public RequestLimiter requests() {
        return current.requests();
    }

    @Override
    public Map<String, Policy> policies() {
        return current.policies();
    }

    /** Tells {@code listener} of every new request limiter, such as the filter that enforces it. */
    void onReplace(Consumer<RequestLimiter> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    void replace(Rules rules) {
        this.current = Objects.requireNonNull(rules, "rules");
        listeners.forEach(listener -> listener.accept(rules.requests()));
    }
}
