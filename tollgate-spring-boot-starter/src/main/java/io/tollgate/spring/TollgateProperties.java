package io.tollgate.spring;

import io.tollgate.FailurePolicy;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.http.RequestLimiter;
import io.tollgate.redis.RedisRateLimiter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.bind.Name;

/**
 * The {@code tollgate.*} properties: policies, the rules the servlet filter enforces, how client IPs are
 * found, what refusals look like, and where buckets live. The policies and rules have the same shape as the
 * Tollgate server's {@code policies} and {@code rules}; see {@code docs/spring-boot.md}.
 *
 * <p>An unknown property under {@code tollgate} stops the start, naming it and the known ones, so that a
 * typo does not pass unnoticed. The sections that the server's file shares are named by its schema ({@code
 * ConfigSchema}), and read by the same reader, which checks every value at startup and fails with a message naming
 * the property.
 *
 * <p>Immutable records, bound by their constructors; lists and maps are never null. Each component's description
 * below is what an IDE shows for the property.
 *
 * @param enabled Whether Tollgate limits anything; false turns the filter and @RateLimit off.
 * @param policies The policies by name: each a list of limits, all checked together.
 * @param concurrencyLimits Limits on the requests of one client in flight at once, by name, for rules'
 *     concurrency-limit.
 * @param rules The rules the servlet filter enforces, checked in order; a refusal ends the check.
 * @param clientIp How the client IP of the ip key is found.
 * @param responses What responses carry and what a refusal looks like.
 * @param paths How request paths are read before rules match them.
 * @param redis Redis, for limits shared by every instance of the application.
 * @param memory The in-memory store, used when there is no Redis.
 * @param filter Where the servlet filter sits.
 * @param gateway Spring Cloud Gateway's rate limiter, with tollgate-spring-cloud-gateway.
 * @param warmUp Whether to warm the limiter up (connect, load the scripts, run decisions of its own) before the
 *     application reports ready, so that the first requests do not run out of the Redis time budget.
 * @param topKeys Who is limited: how the Actuator's tollgate/top shows the keys refused and charged most, and how
 *     many keys each summary holds.
 * @param overload Protecting the application from overload: a limit on requests in flight learnt from its latency
 *     and failures, the lowest priority refused first with a 503.
 * @param store Where the buckets live, stated: redis (shared by every instance; the start fails if no Redis can be
 *     used) or memory (this instance alone). Unset: Redis where tollgate.redis or the application's
 *     spring.data.redis.* gives one, else memory.
 */
@ConfigurationProperties(prefix = "tollgate", ignoreUnknownFields = false)
public record TollgateProperties(
        @DefaultValue("true") boolean enabled,
        Map<String, Policy> policies,
        Map<String, ConcurrencyLimit> concurrencyLimits,
        List<Rule> rules,
        @DefaultValue ClientIp clientIp,
        @DefaultValue Responses responses,
        @DefaultValue Paths paths,
        @DefaultValue Redis redis,
        @DefaultValue Memory memory,
        @DefaultValue Filter filter,
        @DefaultValue Gateway gateway,
        @DefaultValue("true") boolean warmUp,
        @DefaultValue TopKeys topKeys,
        @DefaultValue Overload overload,
        Store store) {

    /** Where the buckets live, as {@code tollgate.store} states it. */
    public enum Store {
        /** In Redis, shared by every instance: the start fails if no Redis can be used. */
        REDIS,
        /** In this instance's memory: each instance limits alone. */
        MEMORY
    }

    /** Keeps the maps in the order given, and makes absent collections empty. */
    public TollgateProperties {
        policies = BoundValues.ordered(policies);
        concurrencyLimits = BoundValues.ordered(concurrencyLimits);
        rules = BoundValues.listed(rules);
    }

    /**
     * A named policy.
     *
     * @param limits The limits, 1 to 8, all checked together: a request passes only if every one has tokens.
     * @param quotas Calendar quotas, 0 to 4, checked with the limits: at most count per hour, day, week or month.
     * @param priority The priority under overload of the requests charged this policy (a client's plan): critical,
     *     default or sheddable, unless their rule gives its own.
     * @param maxDebt How far below empty a charge after the response may take each limit's bucket, as the time
     *     that debt takes to refill: the longest one charge can keep a client out, past one token (default: the
     *     longest time any limit takes to fill from empty).
     */
    public record Policy(List<Limit> limits, List<Quota> quotas, String priority, Duration maxDebt) {

        /** Makes absent lists empty. */
        public Policy {
            limits = BoundValues.listed(limits);
            quotas = BoundValues.listed(quotas);
        }
    }

    /**
     * A calendar quota: the whole count comes back when the next period begins in the zone.
     *
     * @param count The tokens each period allows.
     * @param period The period: hour, day, week (from Monday) or month.
     * @param zone The time zone whose clock sets the boundaries, such as Europe/Paris (default UTC).
     */
    public record Quota(Long count, String period, String zone) {}

    /**
     * At most so many requests of one client in flight at once.
     *
     * @param maxInFlight The most requests of one client in flight at once, 1 to 100000.
     * @param lease How long the slots of an instance that died stay taken in Redis (default 30s).
     */
    public record ConcurrencyLimit(Integer maxInFlight, Duration lease) {}

    /**
     * One token bucket.
     *
     * @param capacity The most tokens the bucket holds: the burst a client may send at once.
     * @param refill How fast the bucket regains tokens: N/s, N/m, N/h, N/d, or "N per 10s".
     */
    public record Limit(Long capacity, String refill) {}

    /**
     * Which requests a policy applies to, and how clients are told apart.
     *
     * @param path The path pattern: * is one path segment or part of one, ** any number of whole segments.
     * @param pathCase Whether the path pattern matches paths whatever their case (ignore) or only in its own (exact).
     * @param methods The methods matched; empty matches every method.
     * @param host The host matched, or any host if unset.
     * @param requireHeader A header that must be present for the rule to apply.
     * @param policy The policy charged: one of tollgate.policies; may be left out for a rule with a
     *     concurrency-limit.
     * @param concurrencyLimit A concurrency limit, one of tollgate.concurrency-limits: at most so many requests in
     *     flight per key.
     * @param key The client key: ip, header:NAME, query:NAME, principal, constant:VALUE, or several joined by +.
     * @param cost The tokens a request costs.
     * @param onMissingKey What to do when a request lacks the key's source: skip, fallback:KEY or reject:STATUS.
     * @param dryRun Whether the rule only reports, in headers and metrics, and never refuses.
     * @param policyFrom Where a request's policy name comes from, such as its customer's plan; the rule's policy
     *     otherwise.
     * @param overrides The policy of a client (its key's own value, such as an API key), whatever policy-from says.
     * @param allow Clients never limited (still counted): client key values, IP addresses or CIDR blocks.
     * @param deny Clients always refused with 403 and a problem body: client key values, IP addresses or CIDR
     *     blocks.
     * @param responseCost How the cost is settled once the response is known: a header that gives it, or by status.
     * @param priority How much the rule's requests matter when the application is overloaded: critical, default or
     *     sheddable, the lowest refused first (default: the priority of the policy charged, else default).
     */
    public record Rule(
            @DefaultValue("/**") String path,
            @DefaultValue("ignore") String pathCase,
            List<String> methods,
            String host,
            String requireHeader,
            String policy,
            String concurrencyLimit,
            @DefaultValue("ip") String key,
            @DefaultValue("1") long cost,
            @DefaultValue("skip") String onMissingKey,
            boolean dryRun,
            @DefaultValue PolicyFrom policyFrom,
            Map<String, String> overrides,
            List<String> allow,
            List<String> deny,
            @DefaultValue ResponseCost responseCost,
            String priority) {

        /** Makes absent collections empty. */
        public Rule {
            methods = BoundValues.listed(methods);
            overrides = BoundValues.ordered(overrides);
            allow = BoundValues.listed(allow);
            deny = BoundValues.listed(deny);
        }
    }

    /**
     * How a rule settles a request's cost once its response is known; set none to keep the cost taken.
     *
     * @param header A response header that gives the request's whole cost, such as X-Tokens-Used.
     * @param chargeStatuses Only responses of these statuses cost anything, such as 401, 403; codes or classes such
     *     as 4xx.
     * @param refundStatuses Responses of these statuses cost nothing, such as 5xx; codes or classes.
     */
    public record ResponseCost(String header, List<String> chargeStatuses, List<String> refundStatuses) {

        /** Makes absent lists empty. */
        public ResponseCost {
            chargeStatuses = BoundValues.listed(chargeStatuses);
            refundStatuses = BoundValues.listed(refundStatuses);
        }
    }

    /**
     * Where a rule finds the policy name of a request: set exactly one, or none.
     *
     * @param header A header set by the authentication layer in front, such as X-Plan.
     * @param jwtClaim A claim of the JWT in Authorization: Bearer, read without verifying its signature.
     * @param apiKeys A table from the client key's value (an API key) to a policy name.
     * @param apiKeysFile A YAML or .properties file of API key to policy name, read again when it changes.
     */
    public record PolicyFrom(String header, String jwtClaim, Map<String, String> apiKeys, String apiKeysFile) {

        /** Makes an absent table empty. */
        public PolicyFrom {
            apiKeys = BoundValues.ordered(apiKeys);
        }
    }

    /**
     * How the client IP is found.
     *
     * @param trustedProxies Proxies (addresses or CIDR blocks) whose forwarding header is believed.
     * @param forwardingHeader The header the trusted proxies write: x-forwarded-for or forwarded (RFC 7239).
     * @param groupIpv6By64 Whether every IPv6 client is its /64 network, since one client often owns a whole /64.
     */
    public record ClientIp(
            List<String> trustedProxies,
            @DefaultValue("x-forwarded-for") String forwardingHeader,
            @Name("group-ipv6-by-64") @DefaultValue("true") boolean groupIpv6By64) {

        /** Makes an absent list empty. */
        public ClientIp {
            trustedProxies = BoundValues.listed(trustedProxies);
        }
    }

    /**
     * How request paths are read into the one form that rules match, as the server's paths section.
     *
     * @param mergeSlashes Whether an empty segment (//) is dropped; false refuses such a path with 400.
     * @param backslash What a backslash (or %5C) in a path is: refuse (400) or slash (a separator).
     * @param encodedSlash What an encoded slash (%2F) in a path is: refuse (400) or keep (part of its segment).
     * @param parameters Whether a proxy forwards ;parameters (drop or keep); an application's rules never see them.
     */
    public record Paths(
            @DefaultValue("true") boolean mergeSlashes,
            @DefaultValue("refuse") String backslash,
            @DefaultValue("refuse") String encodedSlash,
            @DefaultValue("drop") String parameters) {}

    /**
     * What responses carry.
     *
     * @param refusalStatus The status of a refusal, 4xx or 5xx.
     * @param unavailableStatus The status of a refusal because the limiter is unavailable and fails closed, 4xx or
     *     5xx.
     * @param problemType The type URI of the refusal's problem body.
     * @param legacyHeaders Whether responses also carry X-RateLimit-Limit, -Remaining and -Reset.
     * @param degradedHeader Whether a decision that a failure policy made is shown in a Tollgate-Degraded header.
     */
    public record Responses(
            @DefaultValue("" + RequestLimiter.DEFAULT_REFUSAL_STATUS)
            int refusalStatus,

            @DefaultValue("" + RequestLimiter.DEFAULT_UNAVAILABLE_STATUS)
            int unavailableStatus,

            @DefaultValue(RequestLimiter.DEFAULT_PROBLEM_TYPE)
            String problemType,

            boolean legacyHeaders,
            boolean degradedHeader) {}

    /**
     * Redis: given here, or the application's own from spring.data.redis.*.
     *
     * @param uri A Redis URI of Tollgate's own (redis://, rediss://, redis-sentinel://); unset: the application's.
     * @param clusterUris The seed nodes of a Redis Cluster of Tollgate's own.
     * @param useApplicationRedis Whether to share the application's Redis (spring.data.redis.*) when no uri is
     *     given here.
     * @param timeout The time budget of a decision; when Redis has not answered by then, the failure policy decides.
     * @param keyPrefix The prefix of every key Tollgate writes.
     * @param failurePolicy What decides while Redis cannot: allow, deny or local.
     * @param expectedInstances For the local failure policy: how many instances share the load, so each enforces
     *     its share.
     * @param batching Whether to send decisions that arrive together as one script call (see
     *     RedisRateLimiter.Builder batching): many more decisions per second under load, the same decisions. On by
     *     default.
     * @param requireRedisAtStart Whether a Redis that cannot be reached at start (a wrong host, port or password)
     *     fails the application's start, rather than being decided around by the failure policy until it answers.
     * @param denyCacheMaxAge How long the deny cache relies on a refusal at most: a reset or refund on another
     *     instance is announced through Redis at once; this bounds what an announcement lost on its way costs.
     * @param leases The policies (or * for all) whose hot keys are answered in memory from slices of their buckets
     *     taken from Redis ahead (see RedisRateLimiter.Builder leases); none by default.
     * @param username The user Tollgate's own Redis authenticates (ACL), in place of one in the URI.
     * @param password The password of Tollgate's own Redis, in place of one in the URI: from the environment or a
     *     file as Spring gives any property (${REDIS_PASSWORD}, or a configtree import).
     */
    public record Redis(
            String uri,
            List<String> clusterUris,
            @DefaultValue("true") boolean useApplicationRedis,

            @DefaultValue(RedisRateLimiter.DEFAULT_TIMEOUT_MILLIS + "ms")
            Duration timeout,

            @DefaultValue(RedisRateLimiter.DEFAULT_KEY_PREFIX)
            String keyPrefix,

            @DefaultValue("local") FailurePolicy failurePolicy,
            Integer expectedInstances,
            @DefaultValue("true") boolean batching,
            boolean requireRedisAtStart,

            @DefaultValue(RedisRateLimiter.DEFAULT_DENY_CACHE_MAX_AGE_MILLIS + "ms")
            Duration denyCacheMaxAge,

            List<String> leases,
            String username,
            String password) {

        /** Makes an absent list empty. */
        public Redis {
            clusterUris = BoundValues.listed(clusterUris);
            leases = BoundValues.listed(leases);
        }
    }

    /**
     * The in-memory store.
     *
     * @param maximumKeys The most client keys held at once.
     */
    public record Memory(
            @DefaultValue("" + InMemoryRateLimiter.DEFAULT_MAXIMUM_KEYS)
            long maximumKeys) {}

    /**
     * Spring Cloud Gateway's rate limiter, {@code #{@tollgateRateLimiter}}.
     *
     * @param gatewayHeaders Whether its answers also carry Spring Cloud Gateway's X-RateLimit-* header fields, as
     *     its Redis limiter sends them, beside RateLimit-Policy, RateLimit and Retry-After.
     */
    public record Gateway(@DefaultValue("true") boolean gatewayHeaders) {}

    /**
     * Where the servlet filter (or, in a WebFlux application, the web filter) sits.
     *
     * @param order The filter's order. The default, -90, runs just after Spring Security (-100), so that the
     *     principal can be a key; below -100 it runs before Spring Security.
     * @param urlPatterns The URL patterns the filter is mapped to.
     */
    public record Filter(
            @DefaultValue("-90") int order,
            @DefaultValue("/*") List<String> urlPatterns) {

        /** Makes an absent list empty. */
        public Filter {
            urlPatterns = BoundValues.listed(urlPatterns);
        }
    }

    /**
     * Who is limited: the summaries of the keys each policy refuses and charges most.
     *
     * @param enabled Whether the decisions of the rules and @RateLimit are counted by policy and key, for the
     *     Actuator's tollgate/top; on by default (counting costs each decision an update of a summary, tens of
     *     nanoseconds).
     * @param show How keys are shown: whole, masked (what the key is, the first four characters of its value and a
     *     digest) or digest (the digest alone).
     * @param capacity The keys each summary holds, 8 to 4096: more keys, a tighter error bound, more memory.
     */
    public record TopKeys(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("masked") String show,
            @DefaultValue("64") int capacity) {}

    /**
     * Protecting the application from overload, whatever each client's limit (docs/load-shedding.md).
     *
     * @param enabled Whether requests in flight are kept under a limit learnt from the application's latency and
     *     failures, the lowest priority refused first with a 503 that takes no tokens; the other settings apply only
     *     then.
     * @param minLimit The least the learnt limit on requests in flight may fall to (default 4).
     * @param initialLimit The limit before anything is learnt (default 20).
     * @param maxLimit The most the limit may grow to (default 1000).
     * @param criticalReserve The share of the limit only critical requests may use, 0 to 1 (default 0.1).
     * @param defaultReserve The share beyond it that sheddable requests may not use, 0 to 1 (default 0.2).
     * @param maxWait How long a request that finds no room waits for one before it is refused (default 50ms; 0
     *     refuses it at once).
     * @param retryAfter The Retry-After of a refusal, in whole seconds rounded up (default 1s).
     */
    public record Overload(
            boolean enabled,
            Integer minLimit,
            Integer initialLimit,
            Integer maxLimit,
            Double criticalReserve,
            Double defaultReserve,
            Duration maxWait,
            Duration retryAfter) {}
}
