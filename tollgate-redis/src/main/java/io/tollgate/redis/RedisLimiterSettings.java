package io.tollgate.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.tollgate.FailurePolicy;
import io.tollgate.TimeSource;
import io.tollgate.guard.GuardSettings;
import io.tollgate.guard.MetricsRecorder;
import io.tollgate.redis.internal.RedisSettings;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The settings a {@link RedisRateLimiter.Builder} collects and checks, naming a bad value: where Redis is, and
 * how the limiter behaves around it. A class of its own so that the limiter's file holds the limiter; its
 * setters are the builder's, and documented there.
 *
 * @param <B> the builder, which every setter returns
 */
abstract class RedisLimiterSettings<B extends RedisLimiterSettings<B>> {

    String uri;
    List<String> clusterUris;
    RedisURI redisUri;
    List<RedisURI> clusterRedisUris;
    SslOptions sslOptions;
    RedisClient client;
    RedisClusterClient clusterClient;
    StatefulRedisConnection<byte[], byte[]> connection;
    StatefulRedisClusterConnection<byte[], byte[]> clusterConnection;
    String keyPrefix = RedisRateLimiter.DEFAULT_KEY_PREFIX;
    TimeSource clientClock;
    TimeSource timeSource = TimeSource.system();
    Duration timeout = Duration.ofMillis(RedisRateLimiter.DEFAULT_TIMEOUT_MILLIS);
    FailurePolicy failurePolicy = RedisSettings.DEFAULT_FAILURE_POLICY;
    final Map<String, FailurePolicy> failurePolicies = new HashMap<>();
    int expectedInstances;
    int breakerThreshold = 5;
    Duration breakerFirstPause = Duration.ofMillis(100);
    Duration breakerLongestPause = Duration.ofMillis(500);
    long denyCacheKeys = RedisRateLimiter.DEFAULT_DENY_CACHE_KEYS;
    Duration denyCacheMaxAge = Duration.ofMillis(RedisRateLimiter.DEFAULT_DENY_CACHE_MAX_AGE_MILLIS);
    MetricsRecorder metrics = MetricsRecorder.NONE;
    boolean batching = true;
    final Set<String> leasedPolicies = new LinkedHashSet<>();
    boolean requireRedisAtStart;
    String description;
    String username;
    char[] password;

    /**
     * Connects to the Redis at {@code uri}: {@code redis://[user:password@]host:port[/db]}, {@code
     * rediss://} for TLS, or {@code redis-sentinel://host:port[,host:port]#masterName}. The limiter owns
     * the client and closes it.
     */
    public B uri(String uri) {
        this.uri = Objects.requireNonNull(uri, "uri");
        return self();
    }

    /**
     * Authenticates to the Redis of {@link #uri} or {@link #clusterUris} as {@code username} (null for the
     * default user) with {@code password}, in place of a user and password in the URIs: so that the password
     * need not be written into a URI. Never printed.
     */
    public B credentials(String username, String password) {
        this.username = username;
        this.password = Objects.requireNonNull(password, "password").toCharArray();
        return self();
    }

    /**
     * Connects to the Redis that {@code uri} names, with what it holds besides: a user and password, TLS, the
     * Sentinels of a master and the database (as an application's own Redis settings describe it); the limiter
     * owns the client and closes it.
     */
    public B uri(RedisURI uri) {
        this.redisUri = Objects.requireNonNull(uri, "uri");
        return self();
    }

    /**
     * Connects to the Redis Cluster reachable through any of {@code seeds}, each with its credentials and TLS as
     * it says; the limiter owns the client.
     */
    public B clusterRedisUris(List<RedisURI> seeds) {
        Objects.requireNonNull(seeds, "seeds");
        if (seeds.isEmpty()) {
            throw new IllegalArgumentException("clusterRedisUris must name at least one node");
        }
        this.clusterRedisUris = List.copyOf(seeds);
        return self();
    }

    /**
     * Sets the TLS options of the client the limiter makes for a URI that asks for TLS ({@code rediss://}, or a
     * {@link RedisURI} with SSL): the certificate authorities it trusts and the certificate it presents, such as
     * an SSL bundle of the application gives them. Without it, the JVM's default trust store is used.
     */
    public B sslOptions(SslOptions options) {
        this.sslOptions = Objects.requireNonNull(options, "options");
        return self();
    }

    /** Connects to the Redis Cluster reachable through any of {@code uris}; the limiter owns the client. */
    public B clusterUris(List<String> uris) {
        Objects.requireNonNull(uris, "uris");
        if (uris.isEmpty()) {
            throw new IllegalArgumentException("clusterUris must name at least one node");
        }
        this.clusterUris = List.copyOf(uris);
        return self();
    }

    /** Opens a connection on an application's client; the limiter closes only that connection. */
    public B client(RedisClient client) {
        this.client = Objects.requireNonNull(client, "client");
        return self();
    }

    /** Opens a connection on an application's cluster client; the limiter closes only that connection. */
    public B clusterClient(RedisClusterClient clusterClient) {
        this.clusterClient = Objects.requireNonNull(clusterClient, "clusterClient");
        return self();
    }

    /** Uses an application's connection (byte-array codec), which the limiter never closes. */
    public B connection(StatefulRedisConnection<byte[], byte[]> connection) {
        this.connection = Objects.requireNonNull(connection, "connection");
        return self();
    }

    /** Uses an application's cluster connection (byte-array codec), which the limiter never closes. */
    public B clusterConnection(StatefulRedisClusterConnection<byte[], byte[]> clusterConnection) {
        this.clusterConnection = Objects.requireNonNull(clusterConnection, "clusterConnection");
        return self();
    }

    /**
     * Sets the prefix of every key (default {@value RedisRateLimiter#DEFAULT_KEY_PREFIX}), to keep
     * Tollgate's keys apart from other data or other applications.
     */
    public B keyPrefix(String keyPrefix) {
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        return self();
    }

    /**
     * Sends the time of {@code clock} with every decision instead of using Redis's own: for deterministic
     * tests only. Instances whose clocks disagree would then disagree on limits. The limiter also sleeps
     * on this clock in {@link io.tollgate.RateLimiter#acquire}, and measures its time budget's bookkeeping by it.
     */
    public B clientClock(TimeSource clock) {
        this.clientClock = Objects.requireNonNull(clock, "clock");
        return self();
    }

    /** Sets what {@link io.tollgate.RateLimiter#acquire} sleeps on (default {@link TimeSource#system()}). */
    public B timeSource(TimeSource timeSource) {
        this.timeSource = Objects.requireNonNull(timeSource, "timeSource");
        return self();
    }

    /**
     * Sets the time budget of a decision (default {@value RedisRateLimiter#DEFAULT_TIMEOUT_MILLIS} ms): if
     * Redis has not answered by then, the failure policy decides.
     *
     * @throws IllegalArgumentException if timeout is not positive
     */
    public B timeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
        this.timeout = timeout;
        return self();
    }

    /** Sets what decides when Redis cannot (default {@link FailurePolicy#LOCAL}). */
    public B failurePolicy(FailurePolicy failurePolicy) {
        this.failurePolicy = Objects.requireNonNull(failurePolicy, "failurePolicy");
        return self();
    }

    /** Sets what decides for the policy named {@code policyName} when Redis cannot, overriding the default. */
    public B failurePolicy(String policyName, FailurePolicy failurePolicy) {
        failurePolicies.put(
                Objects.requireNonNull(policyName, "policyName"),
                Objects.requireNonNull(failurePolicy, "failurePolicy"));
        return self();
    }

    /**
     * Fixes how many instances share the load, so that the {@code LOCAL} fallback enforces this instance's
     * share of each limit: capacity and rate divided by {@code instances}. Without it (the default), each
     * instance announces itself to Redis every second and divides by the instances live when Redis last
     * counted them. A limiter with a fixed count still announces itself (a reset waits for the instances live,
     * and other limiters count it), but takes the fixed share: fix it on every instance of a fleet or on none,
     * and only where instances come and go faster than a few seconds, or to keep a share whatever the count.
     *
     * @throws IllegalArgumentException if instances is below 1
     */
    public B expectedInstances(int instances) {
        if (instances < 1) {
            throw new IllegalArgumentException("expectedInstances must be at least 1, was " + instances);
        }
        this.expectedInstances = instances;
        return self();
    }

    /**
     * Sets the circuit breaker: it opens after {@code consecutiveFailures} failed calls in a row, for
     * {@code firstPause} (default 5 failures, 100 ms), and each failed probe doubles the pause up to
     * {@code longestPause} (default 500 ms, so that decisions return to Redis within about a second of it
     * coming back, reconnecting included).
     *
     * @throws IllegalArgumentException if consecutiveFailures is below 1, or a pause is not positive or
     *     the first is longer than the longest
     */
    public B circuitBreaker(int consecutiveFailures, Duration firstPause, Duration longestPause) {
        Objects.requireNonNull(firstPause, "firstPause");
        Objects.requireNonNull(longestPause, "longestPause");
        if (consecutiveFailures < 1) {
            throw new IllegalArgumentException("consecutiveFailures must be at least 1, was " + consecutiveFailures);
        }
        if (firstPause.isNegative() || firstPause.isZero() || longestPause.compareTo(firstPause) < 0) {
            throw new IllegalArgumentException("pauses must be positive and firstPause (" + firstPause
                    + ") no longer than longestPause (" + longestPause + ")");
        }
        this.breakerThreshold = consecutiveFailures;
        this.breakerFirstPause = firstPause;
        this.breakerLongestPause = longestPause;
        return self();
    }

    /**
     * Sets how many refusals the deny cache remembers (default {@value
     * RedisRateLimiter#DEFAULT_DENY_CACHE_KEYS}); 0 turns it off.
     *
     * @throws IllegalArgumentException if keys is negative
     */
    public B denyCache(long keys) {
        if (keys < 0) {
            throw new IllegalArgumentException("deny cache size must not be negative, was " + keys);
        }
        this.denyCacheKeys = keys;
        return self();
    }

    /**
     * Sets how long the deny cache relies on a refusal at most, counted from when its request was sent
     * (default {@value RedisRateLimiter#DEFAULT_DENY_CACHE_MAX_AGE_MILLIS} ms): past it, the next request for
     * the key asks Redis again (one request per key and instance; the others wait for its answer). A reset or a
     * refund on another instance is announced, and this instance forgets the refusal within milliseconds; the
     * ceiling bounds what an announcement lost on its way costs (a refusal that outlives its bucket's reset by
     * at most this long), at the price of one Redis call per refused key and instance per period.
     *
     * @throws IllegalArgumentException if maxAge is not positive
     */
    public B denyCacheMaxAge(Duration maxAge) {
        Objects.requireNonNull(maxAge, "maxAge");
        if (maxAge.isNegative() || maxAge.isZero()) {
            throw new IllegalArgumentException("deny cache max age must be positive, was " + maxAge);
        }
        this.denyCacheMaxAge = maxAge;
        return self();
    }

    /**
     * Sends decisions in batches (default on): requests that arrive while earlier ones are on their way
     * to Redis go together as one script call, which decides each of them in arrival order exactly as
     * separate calls would. A quiet limiter sends each request at once; under load one script call carries
     * up to 256 decisions, for one hot key or for many keys (on Redis Cluster, of the slots of one master). The time
     * budget, failure policy, circuit breaker, deny cache and metrics apply to every request as without
     * batching; a key that holds something else fails only its own requests. {@link io.tollgate.RateLimiter#acquire},
     * which may reserve ahead, is never batched. Off, every decision is its own call of {@code
     * token_bucket.lua}.
     */
    public B batching(boolean batching) {
        this.batching = batching;
        return self();
    }

    /**
     * Answers the hot keys of the named policies from leases (default: no policy): a key that this instance asks
     * for at least 1 000 tokens a second of gets a slice of its bucket, taken from Redis in one ordinary charge, and
     * requests are answered from the slice in memory; the next slice is taken before this one runs out, and what is
     * left goes back to Redis 100 ms after the last slice, on a reset or a refund of the key on any instance, and on
     * close. A slice is this instance's use of the key in 100 ms, at most the policy's smallest capacity divided by
     * twice the live instances. Nothing is admitted that Redis did not grant; the price is that a request on
     * another instance may be refused while this one holds tokens, and that an answer's {@code remaining} is the
     * lease's. Policies with calendar quotas are never leased. {@value GuardSettings#EVERY_POLICY} leases every
     * policy; calling this again adds to the names.
     *
     * @throws IllegalArgumentException if a name is blank
     */
    public B leases(String... policyNames) {
        for (String name : policyNames) {
            Objects.requireNonNull(name, "policy name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("a leased policy's name must not be blank");
            }
            leasedPolicies.add(name);
        }
        return self();
    }

    /**
     * Fails {@link RedisRateLimiter.Builder#build()} when Redis cannot be reached within its first attempt
     * (default off: the limiter starts anyway and decides by its failure policy until Redis answers). For deployments
     * where a wrong host, port or password should stop the start rather than look like an outage.
     */
    public B requireRedisAtStart(boolean required) {
        this.requireRedisAtStart = required;
        return self();
    }

    /**
     * Says where a {@link #client}, {@link #clusterClient} or connection given to the limiter connects,
     * such as {@code "the application's Redis at cache:6379 (no TLS)"}, for the limiter's line at startup
     * and its messages; the limiter cannot look into a client it did not create. URIs describe themselves.
     *
     * @throws IllegalArgumentException if description is blank
     */
    public B describedAs(String description) {
        Objects.requireNonNull(description, "description");
        if (description.isBlank()) {
            throw new IllegalArgumentException("description must not be blank");
        }
        this.description = description;
        return self();
    }

    /** Records metrics to Micrometer (see {@link MicrometerMetrics} for names and tags). */
    public B metrics(MicrometerMetrics metrics) {
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        return self();
    }

    /**
     * Returns the limiter, and logs one line saying where its buckets live, its budget and failure
     * policy, and whether it is connected. When it opens its own connection and Redis is not reachable
     * yet, it waits for its first attempt (at most two seconds: a refused connection or a wrong password
     * fails at once, an address that does not answer takes the connect timeout of one second), then
     * returns anyway: until Redis answers, the failure policy decides, and the limiter keeps trying to
     * connect every second. With {@link #requireRedisAtStart} it throws instead.
     *
     * @throws IllegalStateException unless exactly one way to reach Redis was given; or if Redis is
     *     required at start and cannot be reached, saying why (such as Redis's {@code WRONGPASS})
     * @throws IllegalArgumentException if a URI is not a Redis URI
     */
    public RedisRateLimiter build() {
        return new RedisRateLimiter(this, RedisClients.connect(this));
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /** The settings of the guard around the store. */
    GuardSettings guardSettings(System.Logger log) {
        return new GuardSettings(
                timeout,
                failurePolicy,
                failurePolicies,
                expectedInstances,
                breakerThreshold,
                breakerFirstPause,
                breakerLongestPause,
                denyCacheKeys,
                denyCacheMaxAge,
                leasedPolicies,
                metrics,
                clientClock != null ? clientClock : timeSource,
                log);
    }
}
