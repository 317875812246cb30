package io.tollgate.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.StoreException;
import io.tollgate.TimeSource;
import io.tollgate.spi.Arguments;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * A {@link RateLimiter} whose buckets live in Redis, so that every instance of a service enforces one
 * limit together. Each decision is one atomic Lua script ({@code token_bucket.lua}): read the bucket,
 * refill it, take the cost, write it back, in one round trip. The script computes exactly what {@link
 * io.tollgate.InMemoryRateLimiter} computes, in the same integer units.
 *
 * <p><b>Time</b> comes from Redis ({@code TIME}), not from the calling JVM, so instances whose clocks
 * disagree still share one limit. For deterministic tests, {@link Builder#clientClock(TimeSource)} sends
 * the caller's time instead.
 *
 * <p><b>Keys.</b> All limits of a policy live in one hash, {@code PREFIX + policy + ":" + key}, so a
 * decision touches one key and works unchanged on Redis Cluster. The key expires when every limit is full
 * again. Client keys longer than 256 bytes are hashed.
 *
 * <p>Works with standalone Redis ({@code redis://}, {@code rediss://}), Sentinel ({@code
 * redis-sentinel://}) and Redis Cluster, Redis 6.2 or newer. Thread-safe; one instance serves a whole
 * application over one multiplexed connection. The asynchronous form never blocks the caller; the
 * synchronous one waits for it at most {@link Builder#timeout(Duration)}. An asynchronous call times out
 * with the client's command timeout: {@code timeout} for a client the limiter creates, the application's
 * own settings for a client or connection it is given. When Redis fails, decisions fail with a {@link
 * StoreException} that names the key and the cause.
 */
public final class RedisRateLimiter implements RateLimiter, AutoCloseable {

    /** The default prefix of every key this limiter writes. */
    public static final String DEFAULT_KEY_PREFIX = "tollgate:";

    /** The default time the synchronous methods wait for Redis. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);

    private static final byte[] REDIS_TIME = new byte[0];
    private static final int MAX_CACHED_POLICIES = 1_024;

    private final RedisScriptingAsyncCommands<byte[], byte[]> redis;
    private final List<AutoCloseable> owned;
    private final TokenBucketScript script = new TokenBucketScript();
    private final BucketKeys keys;
    private final TimeSource clientClock;
    private final TimeSource timeSource;
    private final Duration timeout;
    private final Map<Policy, byte[][]> policyArguments = new ConcurrentHashMap<>();

    private RedisRateLimiter(
            Builder builder, RedisScriptingAsyncCommands<byte[], byte[]> redis, List<AutoCloseable> owned) {
        this.redis = redis;
        this.owned = owned;
        this.keys = new BucketKeys(builder.keyPrefix);
        this.clientClock = builder.clientClock;
        this.timeSource = builder.clientClock != null ? builder.clientClock : builder.timeSource;
        this.timeout = builder.timeout;
    }

    /** Returns a builder; give it exactly one way to reach Redis. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        byte[] bucketKey = bucketKey(key, policy, cost);
        return await(bucketKey, call(bucketKey, policy, cost, 0)).decision(policy);
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        byte[] bucketKey = bucketKey(key, policy, cost);
        return call(bucketKey, policy, cost, 0).handle((reply, failure) -> {
            if (failure != null) {
                throw new CompletionException(failure(bucketKey, failure));
            }
            return reply.decision(policy);
        });
    }

    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        byte[] bucketKey = bucketKey(key, policy, cost);
        long maxWaitMicros = Arguments.maxWaitMicros(maxWait);
        ScriptReply reply = await(bucketKey, call(bucketKey, policy, cost, maxWaitMicros));
        if (!reply.allowed()) {
            return false;
        }
        timeSource.sleepMicros(reply.waitMicros());
        return true;
    }

    /** Closes the connections and clients this limiter created; those given to it stay open. */
    @Override
    public void close() {
        for (AutoCloseable resource : owned) {
            try {
                resource.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the Redis connection failed", e);
            }
        }
    }

    @Override
    public String toString() {
        return "RedisRateLimiter[script " + script.digest() + (clientClock != null ? ", client clock]" : "]");
    }

    /** Returns the SHA-1 digest under which Redis caches the token bucket script. */
    String scriptDigest() {
        return script.digest();
    }

    private byte[] bucketKey(String key, Policy policy, long cost) {
        Arguments.checkRequest(key, policy, cost);
        return keys.key(policy.name(), key);
    }

    /**
     * Runs the script. The stage completes with Redis's reply, or with Lettuce's failure, such as a timeout
     * that the client's timeout options raise.
     */
    private CompletableFuture<ScriptReply> call(byte[] bucketKey, Policy policy, long cost, long maxWaitMicros) {
        byte[][] fixed = policyArguments(policy);
        byte[][] args = new byte[fixed.length + 3][];
        args[0] = clientClock == null ? REDIS_TIME : ascii(clientClock.nowMicros());
        args[1] = ascii(cost);
        args[2] = ascii(maxWaitMicros);
        System.arraycopy(fixed, 0, args, 3, fixed.length);
        try {
            return script.run(redis, bucketKey, args).thenApply(ScriptReply::of);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
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
                args[1 + 3 * i + j] = ascii(cpn[j]);
            }
        }
        args[0] = String.join(";", described).getBytes(StandardCharsets.US_ASCII);
        if (policyArguments.size() >= MAX_CACHED_POLICIES) {
            policyArguments.clear(); // policies made on the fly: keep the cache bounded
        }
        policyArguments.put(policy, args);
        return args;
    }

    private StoreException failure(byte[] bucketKey, Throwable failure) {
        Throwable cause = TokenBucketScript.unwrap(failure);
        String what = cause instanceof TimeoutException || cause instanceof RedisCommandTimeoutException
                ? "did not answer within " + timeout.toMillis() + " ms"
                : "failed: " + cause.getMessage();
        return new StoreException(
                "Redis " + what + " (deciding for key '" + BucketKeys.describe(bucketKey) + "')", cause);
    }

    /** Waits for a reply at most the timeout. */
    private <T> T await(byte[] bucketKey, CompletableFuture<T> future) {
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw failure(bucketKey, e.getCause());
        } catch (TimeoutException e) {
            future.cancel(false);
            throw failure(bucketKey, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            future.cancel(false);
            throw new StoreException(
                    "interrupted while waiting for Redis (deciding for key '" + BucketKeys.describe(bucketKey) + "')",
                    e);
        }
    }

    private static byte[] ascii(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
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
        private Duration timeout = DEFAULT_TIMEOUT;

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
         * on this clock in {@link RateLimiter#acquire}.
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
         * Sets how long a decision may take before it fails with a {@link StoreException} (default one
         * second).
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

        /**
         * Connects and returns the limiter.
         *
         * @throws IllegalStateException unless exactly one way to reach Redis was given
         * @throws IllegalArgumentException if the URI is not a Redis URI
         * @throws StoreException if Redis cannot be reached
         */
        public RedisRateLimiter build() {
            long given = Stream.of(uri, clusterUris, client, clusterClient, connection, clusterConnection)
                    .filter(Objects::nonNull)
                    .count();
            if (given != 1) {
                throw new IllegalStateException("give exactly one of uri, clusterUris, client, clusterClient, "
                        + "connection or clusterConnection; " + given + " were given");
            }
            try {
                return connect();
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new StoreException("cannot connect to Redis: " + e.getMessage(), e);
            }
        }

        private RedisRateLimiter connect() {
            List<AutoCloseable> owned = new ArrayList<>();
            try {
                return connect(owned);
            } catch (RuntimeException e) {
                for (AutoCloseable resource : owned) {
                    try {
                        resource.close();
                    } catch (Exception suppressed) {
                        e.addSuppressed(suppressed);
                    }
                }
                throw e;
            }
        }

        private RedisRateLimiter connect(List<AutoCloseable> owned) {
            if (uri != null) {
                RedisClient created = RedisClient.create(redisUri(uri));
                created.setOptions(ClientOptions.builder()
                        .timeoutOptions(TimeoutOptions.enabled(timeout))
                        .build());
                owned.add(created::shutdown);
                return standalone(created, owned);
            }
            if (client != null) {
                return standalone(client, owned);
            }
            if (connection != null) {
                return new RedisRateLimiter(this, connection.async(), owned);
            }
            if (clusterUris != null) {
                RedisClusterClient created = RedisClusterClient.create(
                        clusterUris.stream().map(Builder::redisUri).toList());
                created.setOptions(ClusterClientOptions.builder()
                        .timeoutOptions(TimeoutOptions.enabled(timeout))
                        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                                .enableAllAdaptiveRefreshTriggers()
                                .enablePeriodicRefresh(Duration.ofSeconds(30))
                                .build())
                        .build());
                owned.add(created::shutdown);
                return cluster(created, owned);
            }
            if (clusterClient != null) {
                return cluster(clusterClient, owned);
            }
            return new RedisRateLimiter(this, clusterConnection.async(), owned);
        }

        private RedisRateLimiter standalone(RedisClient redisClient, List<AutoCloseable> owned) {
            StatefulRedisConnection<byte[], byte[]> opened = redisClient.connect(ByteArrayCodec.INSTANCE);
            owned.add(0, opened);
            return new RedisRateLimiter(this, opened.async(), owned);
        }

        private RedisRateLimiter cluster(RedisClusterClient redisClient, List<AutoCloseable> owned) {
            StatefulRedisClusterConnection<byte[], byte[]> opened = redisClient.connect(ByteArrayCodec.INSTANCE);
            owned.add(0, opened);
            return new RedisRateLimiter(this, opened.async(), owned);
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
