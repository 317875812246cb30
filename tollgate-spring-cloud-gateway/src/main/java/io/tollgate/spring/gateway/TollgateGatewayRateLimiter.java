package io.tollgate.spring.gateway;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import io.tollgate.http.RuleOutcome;
import io.tollgate.spring.RulesInForce;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;
import org.springframework.cloud.gateway.support.AbstractStatefulConfigurable;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.ApplicationListener;
import reactor.core.publisher.Mono;

/**
 * A {@link RateLimiter} for Spring Cloud Gateway's {@code RequestRateLimiter} filter, deciding with Tollgate:
 * replace {@code #{@redisRateLimiter}} with {@code #{@tollgateRateLimiter}} and keep the route's key
 * resolver and arguments.
 *
 * <p>Each route's limit comes from its filter arguments: Spring Cloud Gateway's own {@code
 * redis-rate-limiter.replenishRate} (tokens per second), {@code burstCapacity} (the bucket's capacity; 0
 * refuses every request) and {@code requestedTokens} (the cost of a request, 1 by default), or {@code
 * tollgate-rate-limiter.policy}, the name of a policy of {@code tollgate.policies}, which may hold several
 * limits of any period; {@code tollgate-rate-limiter.requested-tokens} sets the cost for it. The bucket is
 * the key resolver's key in that policy, on the application's Tollgate limiter: on Redis (with its time
 * budget and {@code tollgate.redis.failure-policy}) or in memory.
 *
 * <p>Every answer carries {@code RateLimit-Policy} and {@code RateLimit}, a refusal {@code Retry-After}; and,
 * unless turned off, the {@code X-RateLimit-*} fields Spring Cloud Gateway's Redis limiter sends, so that
 * clients of an existing gateway keep working. The gateway's filter chooses the refusal's status (429 by
 * default) and sends no body. Thread-safe.
 */
public final class TollgateGatewayRateLimiter extends AbstractStatefulConfigurable<TollgateGatewayRateLimiter.Config>
        implements RateLimiter<TollgateGatewayRateLimiter.Config>, ApplicationListener<FilterArgsEvent> {

    /** The prefix of Spring Cloud Gateway's own arguments, read as its Redis limiter reads them. */
    public static final String GATEWAY_ARGUMENTS = "redis-rate-limiter";

    /** The prefix of Tollgate's arguments: {@code policy} and {@code requested-tokens}. */
    public static final String TOLLGATE_ARGUMENTS = "tollgate-rate-limiter";

    /** Spring Cloud Gateway's header fields, as its Redis limiter names them. */
    static final String REMAINING_HEADER = "X-RateLimit-Remaining";

    static final String REPLENISH_RATE_HEADER = "X-RateLimit-Replenish-Rate";
    static final String BURST_CAPACITY_HEADER = "X-RateLimit-Burst-Capacity";
    static final String REQUESTED_TOKENS_HEADER = "X-RateLimit-Requested-Tokens";

    private final RulesInForce rules;
    private final ConfigurationService configuration;
    private final boolean gatewayHeaders;
    private final Map<String, RouteLimit> routes = new ConcurrentHashMap<>();

    /** A route's arguments, and the rule they make; no rule if its burst capacity refuses everything. */
    private record RouteLimit(Config config, Rule rule) {}

    /**
     * @param rules the request limiter and policies in force: the first decides and writes the header fields,
     *     the second holds the policies routes name
     * @param gatewayHeaders whether answers also carry Spring Cloud Gateway's {@code X-RateLimit-*} fields
     */
    TollgateGatewayRateLimiter(RulesInForce rules, ConfigurationService configuration, boolean gatewayHeaders) {
        super(Config.class);
        this.rules = rules;
        this.configuration = configuration;
        this.gatewayHeaders = gatewayHeaders;
    }

    /**
     * Reads a route's arguments when the gateway builds the route: Spring Cloud Gateway's and Tollgate's.
     *
     * @throws IllegalArgumentException if the arguments name no limit, an unknown policy, or values out of
     *     range, naming the route and the argument
     */
    @Override
    public void onApplicationEvent(FilterArgsEvent event) {
        Map<String, Object> args = event.getArgs();
        if (args == null
                || args.keySet().stream()
                        .noneMatch(key ->
                                key.startsWith(GATEWAY_ARGUMENTS + ".") || key.startsWith(TOLLGATE_ARGUMENTS + "."))) {
            return;
        }
        Config config = new Config();
        configuration
                .with(config)
                .name(GATEWAY_ARGUMENTS)
                .normalizedProperties(args)
                .bind();
        configuration
                .with(config)
                .name(TOLLGATE_ARGUMENTS)
                .normalizedProperties(args)
                .bind();
        routes.put(event.getRouteId(), new RouteLimit(config, rule(event.getRouteId(), config)));
        getConfig().put(event.getRouteId(), config);
    }

    /**
     * Decides one request of the route for the key its key resolver found. Completes with the decision and
     * its header fields; never with an error for a Redis fault, which the failure policy answers.
     *
     * @throws IllegalArgumentException if the route has no rate limit arguments, nor do the default filters
     */
    @Override
    public Mono<Response> isAllowed(String routeId, String id) {
        RouteLimit route = routeLimit(routeId);
        Rule rule = route.rule();
        if (rule == null) {
            return Mono.just(new Response(false, gatewayHeaders(route, 0))); // burstCapacity 0: none pass
        }
        if (route.config().getPolicy() != null) {
            Policy inForce = rules.policies().get(route.config().getPolicy());
            if (inForce != null && inForce != rule.policy()) { // a refresh changed the policy
                rule = rule(routeId, route.config());
                routes.put(routeId, new RouteLimit(route.config(), rule));
            }
        }
        RequestLimiter limiter = rules.requests();
        Rule decided = rule;
        return Mono.fromCompletionStage(limiter.checkAsync(decided, id))
                .map(outcome -> response(limiter, route, outcome));
    }

    private Response response(RequestLimiter limiter, RouteLimit route, RuleOutcome outcome) {
        RequestDecision decision = limiter.respond(List.of(outcome));
        Map<String, String> headers = new LinkedHashMap<>(decision.headers());
        headers.remove("Content-Type"); // the gateway answers a refusal without a body
        headers.putAll(gatewayHeaders(route, outcome.decision().remaining()));
        return new Response(!outcome.refuses(), headers);
    }

    /** Spring Cloud Gateway's fields, when they are on; the rate and capacity only for its own arguments. */
    private Map<String, String> gatewayHeaders(RouteLimit route, long remaining) {
        if (!gatewayHeaders) {
            return Map.of();
        }
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put(REMAINING_HEADER, Long.toString(remaining));
        Config config = route.config();
        if (config.getPolicy() == null) {
            headers.put(REPLENISH_RATE_HEADER, Integer.toString(config.getReplenishRate()));
            headers.put(BURST_CAPACITY_HEADER, Integer.toString(config.getBurstCapacity()));
            headers.put(REQUESTED_TOKENS_HEADER, Long.toString(cost(config)));
        }
        return headers;
    }

    /** The limit of a route, or of the default filters, or of arguments set in code through getConfig(). */
    private RouteLimit routeLimit(String routeId) {
        RouteLimit route = routes.get(routeId);
        if (route != null) {
            return route;
        }
        Config config = getConfig().get(routeId);
        if (config != null) {
            return routes.computeIfAbsent(routeId, id -> new RouteLimit(config, rule(id, config)));
        }
        RouteLimit defaults = routes.get(RouteDefinitionRouteLocator.DEFAULT_FILTERS);
        if (defaults != null) {
            return defaults;
        }
        throw new IllegalArgumentException("No rate limit for route " + routeId + ": give its RequestRateLimiter"
                + " filter " + GATEWAY_ARGUMENTS + ".replenishRate and burstCapacity, or " + TOLLGATE_ARGUMENTS
                + ".policy, or set them in the default filters");
    }

    private static long cost(Config config) {
        return config.getRequestedTokens() == null ? 1 : config.getRequestedTokens();
    }

    /**
     * Names the policy made of a route's Spring Cloud Gateway arguments after the route: {@code route.ID},
     * with characters a policy name cannot hold replaced, and a long or altered id shortened and told apart
     * by its hash, so that two routes never share buckets.
     */
    static String routePolicyName(String routeId) {
        String cleaned = routeId.replaceAll("[^A-Za-z0-9_.-]", "_");
        String name = "route." + cleaned;
        if (name.length() <= 64 && cleaned.equals(routeId)) {
            return name;
        }
        String hash = Integer.toHexString(routeId.hashCode());
        return name.substring(0, Math.min(name.length(), 64 - hash.length() - 1)) + "." + hash;
    }

    private Rule rule(String routeId, Config config) {
        String where = "route " + routeId + ": ";
        Policy policy;
        long cost = cost(config);
        if (config.getPolicy() != null) {
            Map<String, Policy> policies = rules.policies();
            policy = policies.get(config.getPolicy());
            if (policy == null) {
                throw new IllegalArgumentException(where + TOLLGATE_ARGUMENTS + ".policy: unknown policy '"
                        + config.getPolicy() + "'; defined in tollgate.policies: "
                        + (policies.isEmpty() ? "none" : String.join(", ", new TreeSet<>(policies.keySet()))));
            }
        } else {
            if (config.getReplenishRate() == null || config.getBurstCapacity() == null) {
                throw new IllegalArgumentException(where + "give " + GATEWAY_ARGUMENTS + ".replenishRate and "
                        + GATEWAY_ARGUMENTS + ".burstCapacity, or " + TOLLGATE_ARGUMENTS + ".policy");
            }
            if (config.getReplenishRate() < 1) {
                throw new IllegalArgumentException(where + GATEWAY_ARGUMENTS + ".replenishRate must be at least 1, was "
                        + config.getReplenishRate());
            }
            if (config.getBurstCapacity() < 0) {
                throw new IllegalArgumentException(where + GATEWAY_ARGUMENTS + ".burstCapacity must be at least 0, was "
                        + config.getBurstCapacity());
            }
            if (config.getBurstCapacity() == 0) {
                return null;
            }
            policy = Policy.of(
                    routePolicyName(routeId),
                    Limit.of(config.getBurstCapacity(), Rate.perSecond(config.getReplenishRate())));
        }
        try {
            return Rule.builder(policy).cost(cost).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + e.getMessage(), e);
        }
    }

    /**
     * A route's arguments. Spring Cloud Gateway binds them as JavaBean properties; not thread-safe until it
     * has.
     */
    public static final class Config {
        private Integer replenishRate;
        private Integer burstCapacity;
        private Integer requestedTokens;
        private String policy;

        /** Tokens added per second, Spring Cloud Gateway's {@code replenishRate}; null if not given. */
        public Integer getReplenishRate() {
            return replenishRate;
        }

        /** Sets tokens added per second; returns this config. */
        public Config setReplenishRate(Integer replenishRate) {
            this.replenishRate = replenishRate;
            return this;
        }

        /** The bucket's capacity, Spring Cloud Gateway's {@code burstCapacity}; null if not given. */
        public Integer getBurstCapacity() {
            return burstCapacity;
        }

        /** Sets the bucket's capacity; returns this config. */
        public Config setBurstCapacity(Integer burstCapacity) {
            this.burstCapacity = burstCapacity;
            return this;
        }

        /** What a request costs, {@code requestedTokens}; null for 1. */
        public Integer getRequestedTokens() {
            return requestedTokens;
        }

        /** Sets what a request costs; returns this config. */
        public Config setRequestedTokens(Integer requestedTokens) {
            this.requestedTokens = requestedTokens;
            return this;
        }

        /** The name of a policy of {@code tollgate.policies}, or null to use the gateway's arguments. */
        public String getPolicy() {
            return policy;
        }

        /** Sets the name of a policy of {@code tollgate.policies}; returns this config. */
        public Config setPolicy(String policy) {
            this.policy = policy;
            return this;
        }

        @Override
        public String toString() {
            return "Config[replenishRate=" + replenishRate + ", burstCapacity=" + burstCapacity + ", requestedTokens="
                    + requestedTokens + ", policy=" + policy + "]";
        }
    }

    /** Says which routes are configured, for logs. */
    @Override
    public String toString() {
        return "TollgateGatewayRateLimiter" + getConfig();
    }
}
