package io.tollgate.spring;

import io.tollgate.FailurePolicy;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.http.RequestLimiter;
import io.tollgate.internal.RedisSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code tollgate.*} properties: policies, the rules the servlet filter enforces, how client IPs are
 * found, what refusals look like, and where buckets live. The policies and rules have the same shape as the
 * Tollgate server's {@code policies} and {@code routes}; see {@code docs/spring-boot.md}.
 *
 * <p>An unknown property under {@code tollgate} stops the start, naming it and the known ones, so that a
 * typo does not pass unnoticed.
 *
 * <p>A plain mutable bean, as Spring Boot binds it: each getter and setter reads and writes the property
 * that its field describes. The auto-configuration checks every value at startup and fails with a message
 * naming the property.
 */
@ConfigurationProperties(prefix = "tollgate", ignoreUnknownFields = false)
public class TollgateProperties {

    /** Whether Tollgate limits anything; false turns the filter and @RateLimit off. */
    private boolean enabled = true;

    /** The policies by name: each a list of limits, all checked together. */
    private Map<String, Policy> policies = new LinkedHashMap<>();

    /** Limits on the requests of one client in flight at once, by name, for rules' concurrency-limit. */
    private Map<String, ConcurrencyLimit> concurrencyLimits = new LinkedHashMap<>();

    /** The rules the servlet filter enforces, checked in order; a refusal ends the check. */
    private List<Rule> rules = new ArrayList<>();

    /** How the client IP of the ip key is found. */
    private ClientIp clientIp = new ClientIp();

    /** What responses carry and what a refusal looks like. */
    private Responses responses = new Responses();

    /** Redis, for limits shared by every instance of the application. */
    private Redis redis = new Redis();

    /** The in-memory store, used when there is no Redis. */
    private Memory memory = new Memory();

    /** Where the servlet filter sits. */
    private Filter filter = new Filter();

    /** Spring Cloud Gateway's rate limiter, with tollgate-spring-cloud-gateway. */
    private Gateway gateway = new Gateway();

    /**
     * Whether to warm the limiter up (connect, load the scripts, run decisions of its own) before the
     * application reports ready, so that the first requests do not run out of the Redis time budget.
     */
    private boolean warmUp = true;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isWarmUp() {
        return warmUp;
    }

    public void setWarmUp(boolean warmUp) {
        this.warmUp = warmUp;
    }

    public Map<String, Policy> getPolicies() {
        return policies;
    }

    public void setPolicies(Map<String, Policy> policies) {
        this.policies = policies;
    }

    public Map<String, ConcurrencyLimit> getConcurrencyLimits() {
        return concurrencyLimits;
    }

    public void setConcurrencyLimits(Map<String, ConcurrencyLimit> concurrencyLimits) {
        this.concurrencyLimits = concurrencyLimits;
    }

    public List<Rule> getRules() {
        return rules;
    }

    public void setRules(List<Rule> rules) {
        this.rules = rules;
    }

    public ClientIp getClientIp() {
        return clientIp;
    }

    public void setClientIp(ClientIp clientIp) {
        this.clientIp = clientIp;
    }

    public Responses getResponses() {
        return responses;
    }

    public void setResponses(Responses responses) {
        this.responses = responses;
    }

    public Redis getRedis() {
        return redis;
    }

    public void setRedis(Redis redis) {
        this.redis = redis;
    }

    public Memory getMemory() {
        return memory;
    }

    public void setMemory(Memory memory) {
        this.memory = memory;
    }

    public Gateway getGateway() {
        return gateway;
    }

    public void setGateway(Gateway gateway) {
        this.gateway = gateway;
    }

    public Filter getFilter() {
        return filter;
    }

    public void setFilter(Filter filter) {
        this.filter = filter;
    }

    /** A named policy. */
    public static class Policy {

        /** The limits, 1 to 8, all checked together: a request passes only if every one has tokens. */
        private List<Limit> limits = new ArrayList<>();

        /** Calendar quotas, 0 to 4, checked with the limits: at most count per hour, day, week or month. */
        private List<Quota> quotas = new ArrayList<>();

        public List<Limit> getLimits() {
            return limits;
        }

        public void setLimits(List<Limit> limits) {
            this.limits = limits;
        }

        public List<Quota> getQuotas() {
            return quotas;
        }

        public void setQuotas(List<Quota> quotas) {
            this.quotas = quotas;
        }
    }

    /** A calendar quota: the whole count comes back when the next period begins in the zone. */
    public static class Quota {

        /** The tokens each period allows. */
        private Long count;

        /** The period: hour, day, week (from Monday) or month. */
        private String period;

        /** The time zone whose clock sets the boundaries, such as Europe/Paris (default UTC). */
        private String zone;

        public Long getCount() {
            return count;
        }

        public void setCount(Long count) {
            this.count = count;
        }

        public String getPeriod() {
            return period;
        }

        public void setPeriod(String period) {
            this.period = period;
        }

        public String getZone() {
            return zone;
        }

        public void setZone(String zone) {
            this.zone = zone;
        }
    }

    /** At most so many requests of one client in flight at once. */
    public static class ConcurrencyLimit {

        /** The most requests of one client in flight at once, 1 to 100000. */
        private Integer maxInFlight;

        /** How long the slots of an instance that died stay taken in Redis (default 30s). */
        private Duration lease;

        public Integer getMaxInFlight() {
            return maxInFlight;
        }

        public void setMaxInFlight(Integer maxInFlight) {
            this.maxInFlight = maxInFlight;
        }

        public Duration getLease() {
            return lease;
        }

        public void setLease(Duration lease) {
            this.lease = lease;
        }
    }

    /** One token bucket. */
    public static class Limit {

        /** The most tokens the bucket holds: the burst a client may send at once. */
        private Long capacity;

        /** How fast the bucket regains tokens: N/s, N/m, N/h, N/d, or "N per 10s". */
        private String refill;

        public Long getCapacity() {
            return capacity;
        }

        public void setCapacity(Long capacity) {
            this.capacity = capacity;
        }

        public String getRefill() {
            return refill;
        }

        public void setRefill(String refill) {
            this.refill = refill;
        }
    }

    /** Which requests a policy applies to, and how clients are told apart. */
    public static class Rule {

        /** The path pattern: * is one path segment or part of one, ** any number of whole segments. */
        private String path = "/**";

        /** The methods matched; empty matches every method. */
        private List<String> methods = new ArrayList<>();

        /** The host matched, or any host if unset. */
        private String host;

        /** A header that must be present for the rule to apply. */
        private String requireHeader;

        /** The policy charged: one of tollgate.policies; may be left out for a rule with a concurrency-limit. */
        private String policy;

        /** A concurrency limit, one of tollgate.concurrency-limits: at most so many requests in flight per key. */
        private String concurrencyLimit;

        /** The client key: ip, header:NAME, query:NAME, principal, constant:VALUE, or several joined by +. */
        private String key = "ip";

        /** The tokens a request costs. */
        private long cost = 1;

        /** What to do when a request lacks the key's source: skip, fallback:KEY or reject:STATUS. */
        private String onMissingKey = "skip";

        /** Whether the rule only reports, in headers and metrics, and never refuses. */
        private boolean dryRun;

        /** Where a request's policy name comes from, such as its customer's plan; the rule's policy otherwise. */
        private PolicyFrom policyFrom = new PolicyFrom();

        /** The policy of a client (its key's own value, such as an API key), whatever policy-from says. */
        private Map<String, String> overrides = new LinkedHashMap<>();

        /** Clients never limited (still counted): client key values, IP addresses or CIDR blocks. */
        private List<String> allow = new ArrayList<>();

        /** Clients always refused with 403 and a problem body: client key values, IP addresses or CIDR blocks. */
        private List<String> deny = new ArrayList<>();

        /** How the cost is settled once the response is known: a header that gives it, or by status. */
        private ResponseCost responseCost = new ResponseCost();

        public String getPath() {
            return path;
        }

        public void setPath(String path) {
            this.path = path;
        }

        public List<String> getMethods() {
            return methods;
        }

        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        public String getHost() {
            return host;
        }

        public void setHost(String host) {
            this.host = host;
        }

        public String getRequireHeader() {
            return requireHeader;
        }

        public void setRequireHeader(String requireHeader) {
            this.requireHeader = requireHeader;
        }

        public String getPolicy() {
            return policy;
        }

        public void setPolicy(String policy) {
            this.policy = policy;
        }

        public String getConcurrencyLimit() {
            return concurrencyLimit;
        }

        public void setConcurrencyLimit(String concurrencyLimit) {
            this.concurrencyLimit = concurrencyLimit;
        }

        public String getKey() {
            return key;
        }

        public void setKey(String key) {
            this.key = key;
        }

        public long getCost() {
            return cost;
        }

        public void setCost(long cost) {
            this.cost = cost;
        }

        public String getOnMissingKey() {
            return onMissingKey;
        }

        public void setOnMissingKey(String onMissingKey) {
            this.onMissingKey = onMissingKey;
        }

        public boolean isDryRun() {
            return dryRun;
        }

        public void setDryRun(boolean dryRun) {
            this.dryRun = dryRun;
        }

        public PolicyFrom getPolicyFrom() {
            return policyFrom;
        }

        public void setPolicyFrom(PolicyFrom policyFrom) {
            this.policyFrom = policyFrom;
        }

        public Map<String, String> getOverrides() {
            return overrides;
        }

        public void setOverrides(Map<String, String> overrides) {
            this.overrides = overrides;
        }

        public List<String> getAllow() {
            return allow;
        }

        public void setAllow(List<String> allow) {
            this.allow = allow;
        }

        public List<String> getDeny() {
            return deny;
        }

        public void setDeny(List<String> deny) {
            this.deny = deny;
        }

        public ResponseCost getResponseCost() {
            return responseCost;
        }

        public void setResponseCost(ResponseCost responseCost) {
            this.responseCost = responseCost;
        }
    }

    /** How a rule settles a request's cost once its response is known; set none to keep the cost taken. */
    public static class ResponseCost {

        /** A response header that gives the request's whole cost, such as X-Tokens-Used. */
        private String header;

        /** Only responses of these statuses cost anything, such as 401, 403; codes or classes such as 4xx. */
        private List<String> chargeStatuses = new ArrayList<>();

        /** Responses of these statuses cost nothing, such as 5xx; codes or classes. */
        private List<String> refundStatuses = new ArrayList<>();

        public String getHeader() {
            return header;
        }

        public void setHeader(String header) {
            this.header = header;
        }

        public List<String> getChargeStatuses() {
            return chargeStatuses;
        }

        public void setChargeStatuses(List<String> chargeStatuses) {
            this.chargeStatuses = chargeStatuses;
        }

        public List<String> getRefundStatuses() {
            return refundStatuses;
        }

        public void setRefundStatuses(List<String> refundStatuses) {
            this.refundStatuses = refundStatuses;
        }
    }

    /** Where a rule finds the policy name of a request: set exactly one, or none. */
    public static class PolicyFrom {

        /** A header set by the authentication layer in front, such as X-Plan. */
        private String header;

        /** A claim of the JWT in Authorization: Bearer, read without verifying its signature. */
        private String jwtClaim;

        /** A table from the client key's value (an API key) to a policy name. */
        private Map<String, String> apiKeys = new LinkedHashMap<>();

        /** A YAML or .properties file of API key to policy name, read again when it changes. */
        private String apiKeysFile;

        public String getHeader() {
            return header;
        }

        public void setHeader(String header) {
            this.header = header;
        }

        public String getJwtClaim() {
            return jwtClaim;
        }

        public void setJwtClaim(String jwtClaim) {
            this.jwtClaim = jwtClaim;
        }

        public Map<String, String> getApiKeys() {
            return apiKeys;
        }

        public void setApiKeys(Map<String, String> apiKeys) {
            this.apiKeys = apiKeys;
        }

        public String getApiKeysFile() {
            return apiKeysFile;
        }

        public void setApiKeysFile(String apiKeysFile) {
            this.apiKeysFile = apiKeysFile;
        }
    }

    /** How the client IP is found. */
    public static class ClientIp {

        /** Proxies (addresses or CIDR blocks) whose forwarding header is believed. */
        private List<String> trustedProxies = new ArrayList<>();

        /** The header the trusted proxies write: x-forwarded-for or forwarded (RFC 7239). */
        private String forwardingHeader = "x-forwarded-for";

        /** Whether every IPv6 client is its /64 network, since one client often owns a whole /64. */
        private boolean groupIpv6By64;

        public List<String> getTrustedProxies() {
            return trustedProxies;
        }

        public void setTrustedProxies(List<String> trustedProxies) {
            this.trustedProxies = trustedProxies;
        }

        public String getForwardingHeader() {
            return forwardingHeader;
        }

        public void setForwardingHeader(String forwardingHeader) {
            this.forwardingHeader = forwardingHeader;
        }

        public boolean isGroupIpv6By64() {
            return groupIpv6By64;
        }

        public void setGroupIpv6By64(boolean groupIpv6By64) {
            this.groupIpv6By64 = groupIpv6By64;
        }
    }

    /** What responses carry. */
    public static class Responses {

        /** The status of a refusal, 4xx or 5xx. */
        private int refusalStatus = RequestLimiter.DEFAULT_REFUSAL_STATUS;

        /** The status of a refusal because the limiter is unavailable and fails closed, 4xx or 5xx. */
        private int unavailableStatus = RequestLimiter.DEFAULT_UNAVAILABLE_STATUS;

        /** The type URI of the refusal's problem body. */
        private String problemType = RequestLimiter.DEFAULT_PROBLEM_TYPE;

        /** Whether responses also carry X-RateLimit-Limit, -Remaining and -Reset. */
        private boolean legacyHeaders;

        /** Whether a decision that a failure policy made is shown in a Tollgate-Degraded header. */
        private boolean degradedHeader;

        public int getRefusalStatus() {
            return refusalStatus;
        }

        public void setRefusalStatus(int refusalStatus) {
            this.refusalStatus = refusalStatus;
        }

        public int getUnavailableStatus() {
            return unavailableStatus;
        }

        public void setUnavailableStatus(int unavailableStatus) {
            this.unavailableStatus = unavailableStatus;
        }

        public String getProblemType() {
            return problemType;
        }

        public void setProblemType(String problemType) {
            this.problemType = problemType;
        }

        public boolean isLegacyHeaders() {
            return legacyHeaders;
        }

        public void setLegacyHeaders(boolean legacyHeaders) {
            this.legacyHeaders = legacyHeaders;
        }

        public boolean isDegradedHeader() {
            return degradedHeader;
        }

        public void setDegradedHeader(boolean degradedHeader) {
            this.degradedHeader = degradedHeader;
        }
    }

    /** Redis: given here, or the application's own from spring.data.redis.*. */
    public static class Redis {

        /** A Redis URI of Tollgate's own (redis://, rediss://, redis-sentinel://); unset: the application's. */
        private String uri;

        /** The seed nodes of a Redis Cluster of Tollgate's own. */
        private List<String> clusterUris = new ArrayList<>();

        /** Whether to share the application's Redis (spring.data.redis.*) when no uri is given here. */
        private boolean useApplicationRedis = true;

        /** The time budget of a decision; when Redis has not answered by then, the failure policy decides. */
        private Duration timeout = Duration.ofMillis(RedisSettings.DEFAULT_TIMEOUT_MILLIS);

        /** The prefix of every key Tollgate writes. */
        private String keyPrefix = RedisSettings.DEFAULT_KEY_PREFIX;

        /** What decides while Redis cannot: allow, deny or local. */
        private FailurePolicy failurePolicy = RedisSettings.DEFAULT_FAILURE_POLICY;

        /** For the local failure policy: how many instances share the load, so each enforces its share. */
        private Integer expectedInstances;

        /**
         * Whether to send decisions that arrive together as one script call (see RedisRateLimiter.Builder
         * batching): many more decisions per second under load, the same decisions. On by default.
         */
        private boolean batching = true;

        /**
         * Whether a Redis that cannot be reached at start (a wrong host, port or password) fails the
         * application's start, rather than being decided around by the failure policy until it answers.
         */
        private boolean requireRedisAtStart;

        /**
         * How long the deny cache relies on a refusal at most: a reset or refund on another instance is announced
         * through Redis at once; this bounds what an announcement lost on its way costs.
         */
        private Duration denyCacheMaxAge = Duration.ofMillis(RedisSettings.DEFAULT_DENY_CACHE_MAX_AGE_MILLIS);

        public Duration getDenyCacheMaxAge() {
            return denyCacheMaxAge;
        }

        public void setDenyCacheMaxAge(Duration denyCacheMaxAge) {
            this.denyCacheMaxAge = denyCacheMaxAge;
        }

        public String getUri() {
            return uri;
        }

        public void setUri(String uri) {
            this.uri = uri;
        }

        public List<String> getClusterUris() {
            return clusterUris;
        }

        public void setClusterUris(List<String> clusterUris) {
            this.clusterUris = clusterUris;
        }

        public boolean isUseApplicationRedis() {
            return useApplicationRedis;
        }

        public void setUseApplicationRedis(boolean useApplicationRedis) {
            this.useApplicationRedis = useApplicationRedis;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public FailurePolicy getFailurePolicy() {
            return failurePolicy;
        }

        public void setFailurePolicy(FailurePolicy failurePolicy) {
            this.failurePolicy = failurePolicy;
        }

        public Integer getExpectedInstances() {
            return expectedInstances;
        }

        public void setExpectedInstances(Integer expectedInstances) {
            this.expectedInstances = expectedInstances;
        }

        public boolean isBatching() {
            return batching;
        }

        public void setBatching(boolean batching) {
            this.batching = batching;
        }

        public boolean isRequireRedisAtStart() {
            return requireRedisAtStart;
        }

        public void setRequireRedisAtStart(boolean requireRedisAtStart) {
            this.requireRedisAtStart = requireRedisAtStart;
        }
    }

    /** The in-memory store. */
    public static class Memory {

        /** The most client keys held at once. */
        private long maximumKeys = InMemoryRateLimiter.DEFAULT_MAXIMUM_KEYS;

        public long getMaximumKeys() {
            return maximumKeys;
        }

        public void setMaximumKeys(long maximumKeys) {
            this.maximumKeys = maximumKeys;
        }
    }

    /** Spring Cloud Gateway's rate limiter, {@code #{@tollgateRateLimiter}}. */
    public static class Gateway {

        /**
         * Whether its answers also carry Spring Cloud Gateway's {@code X-RateLimit-*} header fields, as its
         * Redis limiter sends them, beside {@code RateLimit-Policy}, {@code RateLimit} and {@code
         * Retry-After}.
         */
        private boolean gatewayHeaders = true;

        public boolean isGatewayHeaders() {
            return gatewayHeaders;
        }

        public void setGatewayHeaders(boolean gatewayHeaders) {
            this.gatewayHeaders = gatewayHeaders;
        }
    }

    /** Where the servlet filter (or, in a WebFlux application, the web filter) sits. */
    public static class Filter {

        /**
         * The filter's order. The default, -90, runs just after Spring Security (-100), so that the principal
         * can be a key; below -100 it runs before Spring Security.
         */
        private int order = -90;

        /** The URL patterns the filter is mapped to. */
        private List<String> urlPatterns = new ArrayList<>(List.of("/*"));

        public int getOrder() {
            return order;
        }

        public void setOrder(int order) {
            this.order = order;
        }

        public List<String> getUrlPatterns() {
            return urlPatterns;
        }

        public void setUrlPatterns(List<String> urlPatterns) {
            this.urlPatterns = urlPatterns;
        }
    }
}
