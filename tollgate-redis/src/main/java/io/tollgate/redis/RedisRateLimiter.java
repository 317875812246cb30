package io.tollgate.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.spi.Arguments;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
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
 * again. Client keys longer than 256 bytes are hashed.
 *
 * <p><b>When Redis fails</b>, no exception reaches the caller. Every decision completes within the {@link
 * Builder#timeout(Duration) time budget} (default {@value #DEFAULT_TIMEOUT_MILLIS} ms); if Redis is down,
 * hanging, too slow or answering errors, the {@link FailurePolicy} decides instead and the decision says so
 * ({@link Decision#degraded()}). After repeated failures a circuit breaker stops calling Redis for a short,
 * growing pause, and lets a probe through to find out when it is back. Refusals are remembered locally
 * until they end (the deny cache), so a client hammering an empty bucket costs no Redis calls. Bad
 * arguments still throw {@link IllegalArgumentException}.
 *
 * <p>Works with standalone Redis ({@code redis://}, {@code rediss://}), Sentinel ({@code
 * redis-sentinel://}) and Redis Cluster, Redis 6.2 or newer. Thread-safe; one instance serves a whole
 * application over one multiplexed connection.
 */
public final class RedisRateLimiter implements RateLimiter, AutoCloseable {

    /** The default prefix of every key this limiter writes. */
    public static final String DEFAULT_KEY_PREFIX = "tollgate:";

    /** The default time budget of a decision, in milliseconds. */
    public static final long DEFAULT_TIMEOUT_MILLIS = 50;

    /** The default bound on refusals remembered by the deny cache. */
    public static final long DEFAULT_DENY_CACHE_KEYS = 100_000;

    /** How long a degraded refusal ({@link FailurePolicy#DENY}) tells the client to wait. */
    static final long DEGRADED_RETRY_MICROS = 1_000_000;

    /**
     * Lettuce's own command timeout, for clients the limiter creates: not the time budget (the limiter
     * enforces that itself), but a bound on how long a command that nobody waits for any more stays queued
     * on a hung connection. Shorter would also cut off Lettuce's handshake and topology commands.
     */
    private static final TimeoutOptions STALE_COMMANDS = TimeoutOptions.enabled(Duration.ofSeconds(5));

    private static final int MAX_CACHED_POLICIES = 1_024;

    private final RedisConnector connector;
    private final TokenBucketScript script = new TokenBucketScript();
    private final BucketKeys keys;
    private final TimeSource clientClock;
    private final TimeSource timeSource;
    private final Duration timeout;
    private final Deadlines deadlines;
    private final FailurePolicy failurePolicy;
    private final Map<String, FailurePolicy> failurePolicies;
    private final int expectedInstances;
    private final Map<String, CircuitBreaker> breakers = new ConcurrentHashMap<>();
    private final int breakerThreshold;
    private final long breakerFirstPauseMicros;
    private final long breakerLongestPauseMicros;
    private final DenyCache denyCache;
    private final DecisionBatcher batcher;
    private final InMemoryRateLimiter local;
    private final MetricsRecorder metrics;
    private final Map<Policy, byte[][]> policyArguments = new ConcurrentHashMap<>();
    private final Map<Policy, Policy> localPolicies = new ConcurrentHashMap<>();

    private RedisRateLimiter(Builder builder, RedisConnector connector) {
        this.connector = connector;
        this.keys = new BucketKeys(builder.keyPrefix);
        this.clientClock = builder.clientClock;
        this.timeSource = builder.clientClock != null ? builder.clientClock : builder.timeSource;
        this.timeout = builder.timeout;
        this.deadlines = new Deadlines(builder.timeout);
        this.failurePolicy = builder.failurePolicy;
        this.failurePolicies = Map.copyOf(builder.failurePolicies);
        this.expectedInstances = builder.expectedInstances;
        this.breakerThreshold = builder.breakerThreshold;
        this.breakerFirstPauseMicros = micros(builder.breakerFirstPause);
        this.breakerLongestPauseMicros = micros(builder.breakerLongestPause);
        this.denyCache = builder.denyCacheKeys > 0 ? new DenyCache(builder.denyCacheKeys, timeSource) : null;
        this.batcher = builder.batching
                ? new DecisionBatcher(
                        new TokenBucketScript(TokenBucketScript.BATCH_RESOURCE),
                        connector::commands,
                        policy -> policyArguments(policy)[0],
                        builder.clientClock)
                : null;
        this.local = InMemoryRateLimiter.builder().timeSource(timeSource).build();
        this.metrics = builder.metrics;
        metrics.watch(this::breakerState);
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
        return tryAcquireAsync(key, policy, cost).toCompletableFuture().join();
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
        Arguments.checkRequest(key, policy, cost);
        return decide(key, policy, cost, timeSource.nowMicros());
    }

    /** Decides, within the budget counted from {@code startMicros}. */
    private CompletableFuture<Decision> decide(String key, Policy policy, long cost, long startMicros) {
        long now = timeSource.nowMicros();
        DenyCache.Lookup lookup = denyCache == null ? null : denyCache.lookup(policy, key, cost, now);
        if (lookup != null && lookup.refusal() != null) {
            metrics.deniedFromCache(policy);
            return CompletableFuture.completedFuture(lookup.refusal());
        }
        if (lookup != null && !lookup.probing() && lookup.probe() != null) {
            // Another request for this key is asking Redis: decide again once it has the answer.
            long left = micros(timeout) - (now - startMicros);
            if (left <= 0) {
                return CompletableFuture.completedFuture(timedOut(key, policy, cost));
            }
            return lookup.probe()
                    .copy() // the probe is shared: time out this waiter only
                    .orTimeout(left, TimeUnit.MICROSECONDS)
                    .handle((done, failure) -> failure)
                    .thenCompose(failure -> failure != null
                            ? CompletableFuture.completedFuture(timedOut(key, policy, cost))
                            : decide(key, policy, cost, startMicros));
        }
        CompletableFuture<Decision> decision = call(key, policy, cost, 0, now).thenApply(answer -> {
            Decision decided = answer.reply != null ? answer.decision : fallback(key, policy, cost, answer.degradation);
            metrics.decided(policy, decided);
            return decided;
        });
        if (lookup != null && lookup.probing()) {
            decision.whenComplete((decided, failure) -> denyCache.probed(policy, key, lookup.probe()));
        }
        return decision;
    }

    private Decision timedOut(String key, Policy policy, long cost) {
        metrics.failed(Degradation.Cause.TIMEOUT);
        Decision decided = fallback(
                key,
                policy,
                cost,
                degradation(
                        policy,
                        Degradation.Cause.TIMEOUT,
                        "no answer within " + timeout.toMillis() + " ms for key '" + key + "'"));
        metrics.decided(policy, decided);
        return decided;
    }

    /**
     * Blocks until the tokens are taken, reserving them ahead in Redis so that waiting callers on every
     * instance are served in turn. If Redis cannot decide, the failure policy does: {@code ALLOW} returns
     * true at once, {@code DENY} false, {@code LOCAL} waits on the in-memory limiter.
     *
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws IllegalArgumentException if the key is empty, the cost is out of range or maxWait is negative
     * @throws NullPointerException if an argument is null
     */
    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        Arguments.checkRequest(key, policy, cost);
        long maxWaitMicros = Arguments.maxWaitMicros(maxWait);
        long now = timeSource.nowMicros();
        if (denyCache != null && denyCache.refusedForMicros(policy, key, cost, now) > maxWaitMicros) {
            metrics.deniedFromCache(policy);
            return false;
        }
        Answer answer = call(key, policy, cost, maxWaitMicros, now).join();
        if (answer.reply == null) {
            FailurePolicy fallback = failurePolicy(policy);
            metrics.decided(policy, degradedDecision(policy, fallback == FailurePolicy.ALLOW, answer.degradation));
            return switch (fallback) {
                case ALLOW -> true;
                case DENY -> false;
                case LOCAL -> {
                    Policy localPolicy = localPolicy(policy);
                    yield cost <= localPolicy.maxCost() && local.acquire(key, localPolicy, cost, maxWait);
                }
            };
        }
        metrics.decided(policy, answer.decision);
        if (!answer.reply.allowed()) {
            return false;
        }
        timeSource.sleepMicros(answer.reply.waitMicros());
        return true;
    }

    /**
     * Asks Redis whether it answers, for readiness probes: {@code PING}, to every master on Redis Cluster,
     * within the time budget. The stage completes with an empty optional when Redis answered, or with why
     * it did not, such as {@code not connected to Redis at 127.0.0.1:6379} or {@code Redis did not
     * answer within 50 ms}; never exceptionally. Pings are not counted by the circuit breaker, and decisions
     * never need them.
     */
    public CompletionStage<Optional<String>> ping() {
        var redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.completedFuture(Optional.of("not connected to Redis at " + connector.target()));
        }
        CompletionStage<?> pong;
        try {
            if (redis instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
                pong = cluster.upstream().commands().ping();
            } else {
                pong = ((BaseRedisAsyncCommands<?, ?>) redis).ping();
            }
        } catch (RuntimeException e) {
            pong = CompletableFuture.failedFuture(e);
        }
        return pong.toCompletableFuture()
                .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .handle((answer, failure) -> failure == null
                        ? Optional.<String>empty()
                        : Optional.of(
                                StoreFailure.classify(failure, timeout, "").detail()));
    }

    /** Closes the connections and clients this limiter created; those given to it stay open. */
    @Override
    public void close() {
        connector.close();
        deadlines.close();
    }

    @Override
    public String toString() {
        return "RedisRateLimiter[" + connector.target() + ", on failure " + failurePolicy
                + (batcher != null ? ", batching" : "") + "]";
    }

    /**
     * Returns the SHA-1 digest under which Redis caches the script that decides {@link #tryAcquire}: the
     * batch script when batching, else the one-decision script.
     */
    String scriptDigest() {
        return batcher != null ? batcher.scriptDigest() : script.digest();
    }

    /** Returns the worst state among the circuit breakers (one per Redis Cluster master, else one). */
    CircuitBreaker.State breakerState() {
        CircuitBreaker.State worst = CircuitBreaker.State.CLOSED;
        for (CircuitBreaker breaker : breakers.values()) {
            if (breaker.state().compareTo(worst) > 0) {
                worst = breaker.state();
            }
        }
        return worst;
    }

    /**
     * Returns the circuit breaker for the node that serves {@code bucketKey}: one per master on Redis
     * Cluster, so that one master failing degrades only the keys it serves.
     */
    private CircuitBreaker breakerFor(byte[] bucketKey) {
        return breakers.computeIfAbsent(
                connector.nodeOf(bucketKey),
                node -> new CircuitBreaker(breakerThreshold, breakerFirstPauseMicros, breakerLongestPauseMicros));
    }

    /** What Redis answered and the decision it makes, or why it could not answer. */
    private record Answer(ScriptReply reply, Decision decision, Degradation degradation) {}

    /**
     * Runs the script within the time budget, unless the circuit breaker is open. The stage always completes
     * normally, within the budget, with the reply or with why there is none.
     */
    private CompletableFuture<Answer> call(String key, Policy policy, long cost, long maxWaitMicros, long now) {
        byte[] bucketKey = keys.key(policy.name(), key);
        CircuitBreaker breaker = breakerFor(bucketKey);
        if (!breaker.tryCall(now)) {
            metrics.failed(Degradation.Cause.CIRCUIT_OPEN);
            return CompletableFuture.completedFuture(new Answer(
                    null,
                    null,
                    degradation(
                            policy, Degradation.Cause.CIRCUIT_OPEN, "Redis failed repeatedly; not called for now")));
        }
        var redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.completedFuture(failed(
                    breaker,
                    policy,
                    new StoreFailure(
                            Degradation.Cause.UNREACHABLE, "not connected to Redis at " + connector.target(), true)));
        }
        CompletableFuture<ScriptReply> reply;
        try {
            reply = batcher != null && maxWaitMicros == 0
                    ? batcher.submit(bucketKey, policy, cost)
                    : script.run(redis, bucketKey, arguments(policy, cost, maxWaitMicros))
                            .thenApply(ScriptReply::of);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return deadlines.limit(reply).handle((scriptReply, failure) -> {
            if (failure != null) {
                return failed(breaker, policy, StoreFailure.classify(failure, timeout, bucketKey));
            }
            breaker.onSuccess();
            metrics.answered(Math.max(0, timeSource.nowMicros() - now));
            Decision decision = scriptReply.decision(policy);
            if (denyCache != null) {
                denyCache.update(policy, key, cost, now, decision);
            }
            return new Answer(scriptReply, decision, null);
        });
    }

    /** Returns the arguments of token_bucket.lua for one request. */
    private byte[][] arguments(Policy policy, long cost, long maxWaitMicros) {
        byte[][] fixed = policyArguments(policy);
        byte[][] args = new byte[fixed.length + 3][];
        args[0] = TokenBucketScript.nowArgument(clientClock);
        args[1] = TokenBucketScript.ascii(cost);
        args[2] = TokenBucketScript.ascii(maxWaitMicros);
        System.arraycopy(fixed, 0, args, 3, fixed.length);
        return args;
    }

    private Answer failed(CircuitBreaker breaker, Policy policy, StoreFailure failure) {
        if (failure.redisFault()) {
            breaker.onFailure(timeSource.nowMicros());
        } else {
            breaker.onSuccess(); // Redis answered; only this key's value is wrong
        }
        metrics.failed(failure.cause());
        return new Answer(null, null, degradation(policy, failure.cause(), failure.detail()));
    }

    private Degradation degradation(Policy policy, Degradation.Cause cause, String detail) {
        return new Degradation(cause, failurePolicy(policy), detail);
    }

    /** Decides by the failure policy, without Redis. */
    private Decision fallback(String key, Policy policy, long cost, Degradation degradation) {
        return switch (degradation.fallback()) {
            case ALLOW -> degradedDecision(policy, true, degradation);
            case DENY -> degradedDecision(policy, false, degradation);
            case LOCAL -> {
                Policy localPolicy = localPolicy(policy);
                yield cost <= localPolicy.maxCost()
                        ? local.tryAcquire(key, localPolicy, cost).degradedBy(degradation)
                        : degradedDecision(policy, false, degradation);
            }
        };
    }

    /** A decision made without any bucket: the first limit, as if full (allowed) or empty (refused). */
    private static Decision degradedDecision(Policy policy, boolean allowed, Degradation degradation) {
        Limit limit = policy.limits().get(0);
        return new Decision(
                allowed, limit, 0, allowed ? limit.capacity() : 0, allowed ? 0 : DEGRADED_RETRY_MICROS, 0, degradation);
    }

    private FailurePolicy failurePolicy(Policy policy) {
        return failurePolicies.getOrDefault(policy.name(), failurePolicy);
    }

    /** Returns the policy the local fallback enforces: this instance's share of it. */
    private Policy localPolicy(Policy policy) {
        if (expectedInstances == 1) {
            return policy;
        }
        return localPolicies.computeIfAbsent(policy, p -> {
            List<Limit> shares = new ArrayList<>();
            for (Limit limit : p.limits()) {
                long capacity = Math.max(1, (limit.capacity() + expectedInstances - 1) / expectedInstances);
                shares.add(Limit.of(
                        capacity,
                        Rate.of(limit.refill().tokens(), limit.refill().period().multipliedBy(expectedInstances))));
            }
            return new Policy(p.name(), shares);
        });
    }

    /** Returns the policy's part of the script's arguments: "C,P,N;..." and then C, P, N of each limit. */
    private byte[][] policyArguments(Policy policy) {
        byte[][] cached = policyArguments.get(policy);
        if (cached != null) {
            return cached;
        }
        List<Limit> limits = policy.limits();
        byte[][] args = new byte[1 + 3 * limits.size()][];
        List<String> described = new ArrayList<>();
        for (int i = 0; i < limits.size(); i++) {
            Limit limit = limits.get(i);
            long[] cpn = {
                limit.capacity(), limit.refill().ticksPerToken(), limit.refill().ticksPerMicrosecond()
            };
            described.add(cpn[0] + "," + cpn[1] + "," + cpn[2]);
            for (int j = 0; j < 3; j++) {
                args[1 + 3 * i + j] = TokenBucketScript.ascii(cpn[j]);
            }
        }
        args[0] = String.join(";", described).getBytes(StandardCharsets.US_ASCII);
        if (policyArguments.size() >= MAX_CACHED_POLICIES) {
            policyArguments.clear(); // policies made on the fly: keep the cache bounded
        }
        policyArguments.put(policy, args);
        return args;
    }

    private static long micros(Duration duration) {
        return Arguments.maxWaitMicros(duration);
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
        private FailurePolicy failurePolicy = FailurePolicy.LOCAL;
        private final Map<String, FailurePolicy> failurePolicies = new HashMap<>();
        private int expectedInstances = 1;
        private int breakerThreshold = 5;
        private Duration breakerFirstPause = Duration.ofMillis(100);
        private Duration breakerLongestPause = Duration.ofMillis(500);
        private long denyCacheKeys = DEFAULT_DENY_CACHE_KEYS;
        private MetricsRecorder metrics = MetricsRecorder.NONE;
        private boolean batching = true;

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
         * Sets how many instances share the load (default 1), so that the {@code LOCAL} fallback enforces
         * this instance's share of each limit: capacity and rate divided by {@code instances}.
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
         * Sends decisions in batches (default on): requests that arrive while earlier ones are on their way
         * to Redis go together as one script call, which decides each of them in arrival order exactly as
         * separate calls would. A quiet limiter sends each request at once; under load one script call carries
         * up to 256 decisions, for one hot key or for many keys (on Redis Cluster, of one hash slot). The time
         * budget, failure policy, circuit breaker, deny cache and metrics apply to every request as without
         * batching; a key that holds something else fails only its own requests. {@link RateLimiter#acquire},
         * which may reserve ahead, is never batched. Off, every decision is its own call of {@code
         * token_bucket.lua}.
         */
        public Builder batching(boolean batching) {
            this.batching = batching;
            return this;
        }

        /** Records metrics to Micrometer (see {@link MicrometerMetrics} for names and tags). */
        public Builder metrics(MicrometerMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /**
         * Returns the limiter. When it opens its own connection and Redis is not reachable yet, it waits up
         * to two seconds for it, then returns anyway: until Redis answers, the failure policy decides, and
         * the limiter keeps trying to connect every second.
         *
         * @throws IllegalStateException unless exactly one way to reach Redis was given
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
            return new RedisRateLimiter(this, connector());
        }

        private RedisConnector connector() {
            if (connection != null) {
                return RedisConnector.of(connection, connection.async());
            }
            if (clusterConnection != null) {
                return RedisConnector.of(clusterConnection, clusterConnection.async());
            }
            if (client != null) {
                return RedisConnector.connecting(
                        "an application's client",
                        () -> CompletableFuture.supplyAsync(() -> client.connect(ByteArrayCodec.INSTANCE)),
                        StatefulRedisConnection::async,
                        List.of());
            }
            if (clusterClient != null) {
                return RedisConnector.connecting(
                        "an application's cluster client",
                        () -> CompletableFuture.supplyAsync(() -> clusterClient.connect(ByteArrayCodec.INSTANCE)),
                        StatefulRedisClusterConnection::async,
                        List.of());
            }
            ClientResources resources = ClientResources.builder()
                    .reconnectDelay(
                            Delay.exponential(Duration.ofMillis(10), Duration.ofMillis(500), 2, TimeUnit.MILLISECONDS))
                    .build();
            SocketOptions socket = SocketOptions.builder()
                    .connectTimeout(Duration.ofSeconds(1))
                    .build();
            if (uri != null) {
                RedisURI redisUri = redisUri(uri);
                RedisClient created = RedisClient.create(resources, redisUri);
                created.setOptions(ClientOptions.builder()
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                        .socketOptions(socket)
                        .timeoutOptions(STALE_COMMANDS)
                        .build());
                return RedisConnector.connecting(
                        redacted(redisUri),
                        () -> created.connectAsync(ByteArrayCodec.INSTANCE, redisUri),
                        StatefulRedisConnection::async,
                        List.of(created::shutdown, resources::shutdown));
            }
            // A cluster client loads the topology before it connects, which only its blocking connect() does.
            List<RedisURI> seeds = clusterUris.stream().map(Builder::redisUri).toList();
            RedisClusterClient created = RedisClusterClient.create(resources, seeds);
            created.setOptions(ClusterClientOptions.builder()
                    // Not REJECT_COMMANDS: node connections open lazily, and would reject the first command.
                    .socketOptions(socket)
                    .timeoutOptions(STALE_COMMANDS)
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enableAllAdaptiveRefreshTriggers()
                            .enablePeriodicRefresh(Duration.ofSeconds(5))
                            .build())
                    .build());
            return RedisConnector.connecting(
                    "cluster " + seeds.stream().map(Builder::redacted).toList(),
                    () -> CompletableFuture.supplyAsync(() -> created.connect(ByteArrayCodec.INSTANCE)),
                    StatefulRedisClusterConnection::async,
                    List.of(created::shutdown, resources::shutdown));
        }

        private static String redacted(RedisURI uri) {
            return uri.getHost() + ":" + uri.getPort();
        }

        private static RedisURI redisUri(String text) {
            try {
                return RedisURI.create(text);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("invalid Redis URI '" + text + "': " + e.getMessage(), e);
            }
        }
    }
}
