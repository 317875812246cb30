package io.tollgate.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.tollgate.BucketState;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Decision;
import io.tollgate.FailurePolicy;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.internal.Arguments;
import io.tollgate.internal.RedisSettings;
import io.tollgate.internal.guard.CircuitBreaker;
import io.tollgate.internal.guard.GuardSettings;
import io.tollgate.internal.guard.GuardedRateLimiter;
import io.tollgate.internal.guard.MetricsRecorder;
import io.tollgate.redis.internal.ScriptArguments;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.stream.Stream;

/**
 * A {@link RateLimiter} whose buckets live in Redis, so that every instance of a service enforces one
 * limit together. Each decision is one atomic Lua script ({@code token_bucket.lua}): read the bucket,
 * refill it, take the cost, write it back, in one round trip. The script computes exactly what {@link
 * InMemoryRateLimiter} computes, in the same integer units.
 *
 * <p><b>Time</b> comes from Redis ({@code TIME}), not from the calling JVM, so instances whose clocks
 * disagree still share one limit. For deterministic tests, {@link Builder#clientClock(TimeSource)} sends
 * the caller's time instead.
 *
 * <p><b>Keys.</b> All limits of a policy live in one key, {@code PREFIX + policy + ":" + key}, so a
 * decision touches one key and works unchanged on Redis Cluster. The key expires when every limit is full
 * again. A client key longer than 256 characters is kept under its digest, as in memory (the one key rule).
 *
 * <p><b>When Redis fails</b>, no exception reaches the caller. Every decision completes within the {@link
 * Builder#timeout(Duration) time budget} (default {@value #DEFAULT_TIMEOUT_MILLIS} ms); if Redis is down,
 * hanging, too slow or answering errors, the {@link FailurePolicy} decides instead and the decision says so
 * ({@link Decision#degraded()}). After repeated failures a circuit breaker stops calling Redis for a short,
 * growing pause, and lets a probe through to find out when it is back. Refusals are remembered locally
 * until they end (the deny cache), so a client hammering an empty bucket costs no Redis calls. Bad
 * arguments still throw {@link IllegalArgumentException}.
 *
 * <p><b>While Redis is reachable, every admitted request is charged there.</b> A request whose budget runs
 * out stays on its way to Redis, and Redis's late answer is not thrown away: it updates what this instance
 * knows of the key, and if the failure policy admitted the request while Redis refused it, the request is
 * charged to Redis all the same (so the next requests wait for it); if the failure policy refused a request
 * that Redis allowed, its tokens are given back. The {@code LOCAL} failure policy decides on the last state
 * Redis reported for each key, not on a full bucket.
 *
 * <p>Works with standalone Redis ({@code redis://}, {@code rediss://}), Sentinel ({@code
 * redis-sentinel://}) and Redis Cluster, Redis 6.2 or newer. Thread-safe; one instance serves a whole
 * application over one multiplexed connection.
 */
public final class RedisRateLimiter implements RateLimiter, AutoCloseable {

    /** The prefix of every bucket's key. */
    public static final String DEFAULT_KEY_PREFIX = RedisSettings.DEFAULT_KEY_PREFIX;

    /** The default time budget of a decision, in milliseconds. */
    public static final long DEFAULT_TIMEOUT_MILLIS = RedisSettings.DEFAULT_TIMEOUT_MILLIS;

    /** How many refused keys the deny cache remembers by default. */
    public static final long DEFAULT_DENY_CACHE_KEYS = 100_000;

    /** How long the deny cache relies on a refusal at most by default, in milliseconds. */
    public static final long DEFAULT_DENY_CACHE_MAX_AGE_MILLIS = RedisSettings.DEFAULT_DENY_CACHE_MAX_AGE_MILLIS;

    private static final System.Logger LOG = System.getLogger(RedisRateLimiter.class.getName());

    /** How long {@link #warmUp} waits for a connection beyond what the builder waited. */
    private static final Duration CONNECT_WAIT = Duration.ofSeconds(1);

    private final RedisConnector connector;
    private final RedisBucketStore store;
    private final GuardedRateLimiter<byte[]> guard;
    private final LiveInstances liveInstances;
    private final BucketChanges changes;
    private final FailurePolicy failurePolicy;
    private final Duration timeout;

    private RedisRateLimiter(Builder builder, RedisConnector connector) {
        this.connector = connector;
        this.failurePolicy = builder.failurePolicy;
        this.timeout = builder.timeout;
        BucketKeys keys = new BucketKeys(builder.keyPrefix);
        this.changes = new BucketChanges(connector, keys.changesChannel(), connector.pubSub());
        this.store = new RedisBucketStore(
                connector, keys, new ScriptArguments(builder.clientClock), changes, builder.batching, builder.timeout);
        RedisPermits permits = new RedisPermits(connector, keys, builder.clientClock, builder.timeout);
        this.guard = new GuardedRateLimiter<>(
                store,
                permits,
                new GuardSettings(
                        builder.timeout,
                        builder.failurePolicy,
                        builder.failurePolicies,
                        builder.expectedInstances,
                        builder.breakerThreshold,
                        builder.breakerFirstPause,
                        builder.breakerLongestPause,
                        builder.denyCacheKeys,
                        builder.denyCacheMaxAge,
                        builder.metrics,
                        builder.clientClock != null ? builder.clientClock : builder.timeSource,
                        LOG));
        // With a count fixed, nothing needs the live one: the limiter neither announces itself nor counts.
        this.liveInstances = builder.expectedInstances > 0
                ? null
                : new LiveInstances(connector, keys.instancesKey(), guard::instancesCounted);
        if (liveInstances != null) {
            liveInstances.start(builder.timeout.multipliedBy(4));
        }
        changes.listen(guard, builder.timeout.multipliedBy(4));
        LOG.log(
                Level.INFO,
                "Tollgate keeps its buckets in {0}; budget {1} ms, on failure {2}, batching {3}; {4}",
                connector.where(),
                builder.timeout.toMillis(),
                failurePolicy,
                store.batching() ? "on" : "off",
                connector.connected() ? "connected" : connector.notConnected() + ", trying again every second");
    }

    /** Returns a builder; give it exactly one way to reach Redis. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Decides within the time budget. If Redis cannot decide, the failure policy does, and the decision is
     * {@linkplain Decision#degraded() degraded}.
     *
     * @throws IllegalArgumentException if the key is empty or the cost is out of range for the policy
     * @throws NullPointerException if the key or policy is null
     */
    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        return guard.tryAcquire(key, policy, cost);
    }

    /**
     * Decides without blocking; the stage completes within the time budget and never exceptionally for a
     * Redis fault. It may complete on Lettuce's I/O thread: do not block in its callbacks.
     *
     * @throws IllegalArgumentException if the key is empty or the cost is out of range for the policy
     * @throws NullPointerException if the key or policy is null
     */
    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        return guard.tryAcquireAsync(key, policy, cost);
    }

    /**
     * Blocks until the tokens are taken, reserving them ahead in Redis so that waiting callers on every
     * instance are served in turn. If Redis cannot decide, the failure policy does: {@code ALLOW} returns
     * true at once, {@code DENY} false, {@code LOCAL} waits on this instance's bucket of the key.
     *
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws IllegalArgumentException if the key is empty, the cost is out of range or maxWait is negative
     * @throws NullPointerException if an argument is null
     */
    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        return guard.acquire(key, policy, cost, maxWait);
    }

    /**
     * Prepares the limiter for traffic, so that the first real requests do not pay for connecting, loading
     * scripts, loading classes or compiling code, and so do not run out of their budget: waits for the
     * connection (up to a second more than the builder did), loads both scripts into Redis, then runs
     * decisions as {@link RateLimiter#warmUp} says, on keys no client uses, whose buckets refill within
     * milliseconds. Those decisions are counted in the metrics like any other, and never logged as degraded.
     *
     * @param maxTime the longest this may take
     * @return true once warm; false if Redis could not be reached within {@code maxTime} (the limiter then
     *     decides by its failure policy until Redis answers, as ever)
     * @throws IllegalArgumentException if maxTime is negative
     */
    @Override
    public boolean warmUp(Duration maxTime) {
        long maxNanos = Math.min(Arguments.maxWaitMicros(maxTime), Long.MAX_VALUE / 4_000) * 1_000;
        long deadline = System.nanoTime() + maxNanos;
        String notReady = store.prepare(maxNanos, CONNECT_WAIT);
        if (notReady != null) {
            LOG.log(Level.WARNING, "Tollgate: not warmed up: {0}", notReady);
            return false;
        }
        return RateLimiter.super.warmUp(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }

    /**
     * Returns what the key's buckets hold in Redis now, without taking anything: the script reads the bucket
     * and writes nothing. Within the time budget.
     *
     * @throws IllegalStateException if Redis cannot answer within the budget, saying why
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public BucketState inspect(String key, Policy policy) {
        return guard.inspect(key, policy);
    }

    /**
     * Gives the tokens back in Redis, in one script call that is not batched and has no time budget, then
     * announces it to the other instances sharing the Redis, so that none keeps refusing the key from its deny
     * cache; the stage completes once both are done. The stage fails if Redis cannot be asked; the tokens then
     * stay taken.
     *
     * @throws IllegalArgumentException if the key is empty, or the cost is below 1 or beyond what a charge may
     *     be
     * @throws NullPointerException if the key or policy is null
     */
    @Override
    public CompletionStage<Void> refundAsync(String key, Policy policy, long cost) {
        return guard.refundAsync(key, policy, cost);
    }

    /**
     * Takes {@code cost} from the key's buckets in Redis whatever they hold, into debt if they hold less, in
     * one script call without a time budget (a cost known after the fact is owed however late it lands), and
     * completes with what they hold after it. The stage fails, and nothing is charged, if Redis cannot be
     * asked (the failure policy decides requests, not charges).
     *
     * @throws IllegalArgumentException if the key is empty or the cost is out of range
     * @throws NullPointerException if the key or policy is null
     */
    @Override
    public CompletionStage<BucketState> chargeAsync(String key, Policy policy, long cost) {
        return guard.chargeAsync(key, policy, cost);
    }

    /**
     * Takes a slot of {@code limit} for {@code key} in Redis, one script call within the time budget: a lease
     * that this limiter renews while the permit is open, and that runs out within {@link
     * ConcurrencyLimit#lease()} if this instance dies. If Redis cannot decide in time, the failure policy of the
     * limit's name does ({@link Builder#failurePolicy(String, FailurePolicy)}): {@code ALLOW} grants a permit
     * holding no slot, {@code DENY} refuses, {@code LOCAL} counts against this instance's share of the limit
     * (its maximum divided by the expected instances, at least 1). Never completes exceptionally for a Redis
     * fault; it may complete on Lettuce's I/O thread.
     *
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public CompletionStage<Permit> tryAcquirePermitAsync(String key, ConcurrencyLimit limit) {
        return guard.tryAcquirePermitAsync(key, limit);
    }

    /**
     * Returns how many permits of the key are open in Redis, on every instance, leases that ran out not
     * counted. Within the time budget.
     *
     * @throws IllegalStateException if Redis cannot answer within the budget, saying why
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public int inFlight(String key, ConcurrencyLimit limit) {
        return guard.inFlight(key, limit);
    }

    /**
     * Deletes the key's buckets in Redis, forgets what this instance knew of them (its deny cache and the
     * fallback's copy), and announces the reset on the channel {@code PREFIX + "changes"}, so that every other
     * instance sharing the Redis forgets them too: the next request on any instance finds new buckets. Returns
     * once Redis has taken the announcement. Each step within the time budget.
     *
     * @throws IllegalStateException if Redis cannot answer within the budget, saying why; or if the buckets were
     *     deleted but the announcement could not be sent, saying so
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public void reset(String key, Policy policy) {
        guard.reset(key, policy);
    }

    /**
     * Says whether Redis keeps the key's buckets now ({@code EXISTS}): not for a key never seen, nor once they
     * were reset or expired full. Within the time budget.
     *
     * @throws IllegalStateException if Redis cannot answer within the budget, saying why
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public boolean holds(String key, Policy policy) {
        return guard.holds(key, policy);
    }

    /**
     * Asks Redis whether it answers, for readiness probes: {@code PING}, to every master on Redis Cluster,
     * within the time budget. The stage completes with an empty optional when Redis answered, or with why
     * it did not, such as {@code not connected to Redis at 127.0.0.1:6379} or {@code Redis did not
     * answer within 50 ms}; never exceptionally. Pings are not counted by the circuit breaker, and decisions
     * never need them.
     */
    public CompletionStage<Optional<String>> ping() {
        return store.ping(timeout);
    }

    /**
     * Asks Redis whether it answers, as {@link #ping()} does, but waiting at most {@code maxWait} rather than
     * the time budget: for a monitor that must not take one slow answer for Redis being down.
     *
     * @throws IllegalArgumentException if maxWait is not positive
     * @throws NullPointerException if maxWait is null
     */
    public CompletionStage<Optional<String>> ping(Duration maxWait) {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isZero() || maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must be positive, was " + maxWait);
        }
        return store.ping(maxWait);
    }

    /**
     * Gives back the permits still open (waiting at most the time budget; leases not given back run out on
     * their own), stops renewing them, and closes the connections and clients this limiter created; those
     * given to it stay open.
     */
    @Override
    public void close() {
        if (liveInstances != null) {
            liveInstances.close(timeout);
        }
        guard.close(); // gives back the open permits while the connection is still there
        changes.close();
        connector.close();
    }

    @Override
    public String toString() {
        return "RedisRateLimiter[" + connector.target() + ", on failure " + failurePolicy
                + (store.batching() ? ", batching" : "") + "]";
    }

    /**
     * Returns the SHA-1 digest under which Redis caches the script that decides {@link #tryAcquire}: the
     * batch script when batching, else the one-decision script.
     */
    String scriptDigest() {
        return store.decidingScriptDigest();
    }

    /**
     * Returns how many instances share each limit while Redis cannot be asked ({@link FailurePolicy#LOCAL}
     * decides on that share of it), this one included: the {@link Builder#expectedInstances} given, else the
     * instances that announced themselves to Redis within the last few seconds, as Redis last counted them
     * (1 until it has).
     */
    public int instances() {
        return guard.instances();
    }

    /** Returns the worst state among the circuit breakers (one per Redis Cluster master, else one). */
    CircuitBreaker.State breakerState() {
        return guard.breakerState();
    }

    /**
     * Returns the worst state among the circuit breakers in front of Redis (one per Cluster master, else
     * one), as the metrics name it: {@code closed} (Redis is called), {@code half_open} (a probe is let
     * through) or {@code open} (Redis is not called for now); for health checks.
     */
    public String circuitState() {
        return guard.breakerState().name().toLowerCase(Locale.ROOT);
    }

    /** Returns how many times this limiter (re)subscribed to the channel of changes; for tests. */
    long changeSubscriptions() {
        return changes.subscriptions();
    }

    /** Returns the guard around the Redis store; for tests. */
    GuardedRateLimiter<byte[]> guard() {
        return guard;
    }

    /**
     * Settings for a {@link RedisRateLimiter}. Give exactly one of {@link #uri}, {@link #clusterUris},
     * {@link #client}, {@link #clusterClient}, {@link #connection} or {@link #clusterConnection}. Not
     * thread-safe.
     */
    public static final class Builder {

        private String uri;
        private List<String> clusterUris;
        private RedisClient client;
        private RedisClusterClient clusterClient;
        private StatefulRedisConnection<byte[], byte[]> connection;
        private StatefulRedisClusterConnection<byte[], byte[]> clusterConnection;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private TimeSource clientClock;
        private TimeSource timeSource = TimeSource.system();
        private Duration timeout = Duration.ofMillis(DEFAULT_TIMEOUT_MILLIS);
        private FailurePolicy failurePolicy = RedisSettings.DEFAULT_FAILURE_POLICY;
        private final Map<String, FailurePolicy> failurePolicies = new HashMap<>();
        private int expectedInstances;
        private int breakerThreshold = 5;
        private Duration breakerFirstPause = Duration.ofMillis(100);
        private Duration breakerLongestPause = Duration.ofMillis(500);
        private long denyCacheKeys = DEFAULT_DENY_CACHE_KEYS;
        private Duration denyCacheMaxAge = Duration.ofMillis(DEFAULT_DENY_CACHE_MAX_AGE_MILLIS);
        private MetricsRecorder metrics = MetricsRecorder.NONE;
        private boolean batching = true;
        private boolean requireRedisAtStart;
        private String description;

        private Builder() {}

        /**
         * Connects to the Redis at {@code uri}: {@code redis://[user:password@]host:port[/db]}, {@code
         * rediss://} for TLS, or {@code redis-sentinel://host:port[,host:port]#masterName}. The limiter owns
         * the client and closes it.
         */
        public Builder uri(String uri) {
            this.uri = Objects.requireNonNull(uri, "uri");
            return this;
        }

        /** Connects to the Redis Cluster reachable through any of {@code uris}; the limiter owns the client. */
        public Builder clusterUris(List<String> uris) {
            Objects.requireNonNull(uris, "uris");
            if (uris.isEmpty()) {
                throw new IllegalArgumentException("clusterUris must name at least one node");
            }
            this.clusterUris = List.copyOf(uris);
            return this;
        }

        /** Opens a connection on an application's client; the limiter closes only that connection. */
        public Builder client(RedisClient client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /** Opens a connection on an application's cluster client; the limiter closes only that connection. */
        public Builder clusterClient(RedisClusterClient clusterClient) {
            this.clusterClient = Objects.requireNonNull(clusterClient, "clusterClient");
            return this;
        }

        /** Uses an application's connection (byte-array codec), which the limiter never closes. */
        public Builder connection(StatefulRedisConnection<byte[], byte[]> connection) {
            this.connection = Objects.requireNonNull(connection, "connection");
            return this;
        }

        /** Uses an application's cluster connection (byte-array codec), which the limiter never closes. */
        public Builder clusterConnection(StatefulRedisClusterConnection<byte[], byte[]> clusterConnection) {
            this.clusterConnection = Objects.requireNonNull(clusterConnection, "clusterConnection");
            return this;
        }

        /**
         * Sets the prefix of every key (default {@value RedisRateLimiter#DEFAULT_KEY_PREFIX}), to keep
         * Tollgate's keys apart from other data or other applications.
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
            return this;
        }

        /**
         * Sends the time of {@code clock} with every decision instead of using Redis's own: for deterministic
         * tests only. Instances whose clocks disagree would then disagree on limits. The limiter also sleeps
         * on this clock in {@link RateLimiter#acquire}, and measures its time budget's bookkeeping by it.
         */
        public Builder clientClock(TimeSource clock) {
            this.clientClock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Sets what {@link RateLimiter#acquire} sleeps on (default {@link TimeSource#system()}). */
        public Builder timeSource(TimeSource timeSource) {
            this.timeSource = Objects.requireNonNull(timeSource, "timeSource");
            return this;
        }

        /**
         * Sets the time budget of a decision (default {@value RedisRateLimiter#DEFAULT_TIMEOUT_MILLIS} ms): if
         * Redis has not answered by then, the failure policy decides.
         *
         * @throws IllegalArgumentException if timeout is not positive
         */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /** Sets what decides when Redis cannot (default {@link FailurePolicy#LOCAL}). */
        public Builder failurePolicy(FailurePolicy failurePolicy) {
            this.failurePolicy = Objects.requireNonNull(failurePolicy, "failurePolicy");
            return this;
        }

        /** Sets what decides for the policy named {@code policyName} when Redis cannot, overriding the default. */
        public Builder failurePolicy(String policyName, FailurePolicy failurePolicy) {
            failurePolicies.put(
                    Objects.requireNonNull(policyName, "policyName"),
                    Objects.requireNonNull(failurePolicy, "failurePolicy"));
            return this;
        }

        /**
         * Fixes how many instances share the load, so that the {@code LOCAL} fallback enforces this instance's
         * share of each limit: capacity and rate divided by {@code instances}. Without it (the default), each
         * instance announces itself to Redis every second and divides by the instances live when Redis last
         * counted them. A limiter with a fixed count neither announces itself nor counts: fix it on every
         * instance of a fleet or on none, and only where instances come and go faster than a few seconds, or to
         * keep a share whatever the count.
         *
         * @throws IllegalArgumentException if instances is below 1
         */
        public Builder expectedInstances(int instances) {
            if (instances < 1) {
                throw new IllegalArgumentException("expectedInstances must be at least 1, was " + instances);
            }
            this.expectedInstances = instances;
            return this;
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
        public Builder circuitBreaker(int consecutiveFailures, Duration firstPause, Duration longestPause) {
            Objects.requireNonNull(firstPause, "firstPause");
            Objects.requireNonNull(longestPause, "longestPause");
            if (consecutiveFailures < 1) {
                throw new IllegalArgumentException(
                        "consecutiveFailures must be at least 1, was " + consecutiveFailures);
            }
            if (firstPause.isNegative() || firstPause.isZero() || longestPause.compareTo(firstPause) < 0) {
                throw new IllegalArgumentException("pauses must be positive and firstPause (" + firstPause
                        + ") no longer than longestPause (" + longestPause + ")");
            }
            this.breakerThreshold = consecutiveFailures;
            this.breakerFirstPause = firstPause;
            this.breakerLongestPause = longestPause;
            return this;
        }

        /**
         * Sets how many refusals the deny cache remembers (default {@value
         * RedisRateLimiter#DEFAULT_DENY_CACHE_KEYS}); 0 turns it off.
         *
         * @throws IllegalArgumentException if keys is negative
         */
        public Builder denyCache(long keys) {
            if (keys < 0) {
                throw new IllegalArgumentException("deny cache size must not be negative, was " + keys);
            }
            this.denyCacheKeys = keys;
            return this;
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
        public Builder denyCacheMaxAge(Duration maxAge) {
            Objects.requireNonNull(maxAge, "maxAge");
            if (maxAge.isNegative() || maxAge.isZero()) {
                throw new IllegalArgumentException("deny cache max age must be positive, was " + maxAge);
            }
            this.denyCacheMaxAge = maxAge;
            return this;
        }

        /**
         * Sends decisions in batches (default on): requests that arrive while earlier ones are on their way
         * to Redis go together as one script call, which decides each of them in arrival order exactly as
         * separate calls would. A quiet limiter sends each request at once; under load one script call carries
         * up to 256 decisions, for one hot key or for many keys (on Redis Cluster, of the slots of one master). The time
         * budget, failure policy, circuit breaker, deny cache and metrics apply to every request as without
         * batching; a key that holds something else fails only its own requests. {@link RateLimiter#acquire},
         * which may reserve ahead, is never batched. Off, every decision is its own call of {@code
         * token_bucket.lua}.
         */
        public Builder batching(boolean batching) {
            this.batching = batching;
            return this;
        }

        /**
         * Fails {@link #build()} when Redis cannot be reached within its first attempt (default off: the
         * limiter starts anyway and decides by its failure policy until Redis answers). For deployments
         * where a wrong host, port or password should stop the start rather than look like an outage.
         */
        public Builder requireRedisAtStart(boolean required) {
            this.requireRedisAtStart = required;
            return this;
        }

        /**
         * Says where a {@link #client}, {@link #clusterClient} or connection given to the limiter connects,
         * such as {@code "the application's Redis at cache:6379 (no TLS)"}, for the limiter's line at startup
         * and its messages; the limiter cannot look into a client it did not create. URIs describe themselves.
         *
         * @throws IllegalArgumentException if description is blank
         */
        public Builder describedAs(String description) {
            Objects.requireNonNull(description, "description");
            if (description.isBlank()) {
                throw new IllegalArgumentException("description must not be blank");
            }
            this.description = description;
            return this;
        }

        /** Records metrics to Micrometer (see {@link MicrometerMetrics} for names and tags). */
        public Builder metrics(MicrometerMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
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
            long given = Stream.of(uri, clusterUris, client, clusterClient, connection, clusterConnection)
                    .filter(Objects::nonNull)
                    .count();
            if (given != 1) {
                throw new IllegalStateException("give exactly one of uri, clusterUris, client, clusterClient, "
                        + "connection or clusterConnection; " + given + " were given");
            }
            RedisConnector connector = connector();
            if (description != null) {
                connector.describedAs(description);
            }
            if (requireRedisAtStart && !connector.connected()) {
                connector.close();
                throw new IllegalStateException(
                        "Redis is required at start (requireRedisAtStart), but it could not be reached: "
                                + connector.notConnected());
            }
            return new RedisRateLimiter(this, connector);
        }

        private RedisConnector connector() {
            if (connection != null) {
                return RedisConnector.of(connection, connection.async());
            }
            if (clusterConnection != null) {
                return RedisConnector.of(clusterConnection, clusterConnection.async());
            }
            if (client != null) {
                return RedisConnector.onClient(client);
            }
            if (clusterClient != null) {
                return RedisConnector.onClusterClient(clusterClient);
            }
            return uri != null ? RedisConnector.toUri(uri) : RedisConnector.toCluster(clusterUris);
        }
    }
}
