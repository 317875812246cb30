package io.tollgate.redis;

import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.tollgate.Degradation;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import io.tollgate.TimeSource;
import io.tollgate.TokenBucket;
import io.tollgate.guard.BucketStore;
import io.tollgate.guard.StoreFailure;
import io.tollgate.guard.StoreReply;
import io.tollgate.redis.internal.ScriptArguments;
import io.tollgate.redis.internal.TokenBucketScript;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The buckets in Redis, one hash per key, each charge one script call: batched with others for ordinary
 * decisions when batching is on ({@link DecisionBatcher}), alone otherwise.
 *
 * <p>Thread-safe.
 */
final class RedisBucketStore implements BucketStore<byte[]> {

    private final RedisConnector connector;
    private final BucketKeys keys;
    private final ScriptArguments arguments;
    private final TokenBucketScript script = new TokenBucketScript();
    private final DecisionBatcher batcher;
    private final BucketChanges changes;
    private final Duration timeout;
    private final OutOfMemoryLog outOfMemory;

    /**
     * @param changes the channel on which changes outside a request are announced
     * @param batching whether ordinary decisions travel in batches
     * @param timeout the time budget, for messages
     */
    RedisBucketStore(
            RedisConnector connector,
            BucketKeys keys,
            ScriptArguments arguments,
            BucketChanges changes,
            boolean batching,
            Duration timeout) {
        this.connector = connector;
        this.keys = keys;
        this.changes = changes;
        this.arguments = arguments;
        this.timeout = timeout;
        this.outOfMemory = new OutOfMemoryLog(connector.where(), TimeSource.system());
        this.batcher = batching
                ? new DecisionBatcher(
                        new TokenBucketScript(TokenBucketScript.BATCH_RESOURCE),
                        connector::commands,
                        arguments,
                        arguments.clientClock(),
                        new EventLoops(connector::connectionResources))
                : null;
    }

    @Override
    public String name() {
        return "Redis";
    }

    @Override
    public byte[] address(String key, Policy policy) {
        return keys.key(policy.name(), key);
    }

    @Override
    public String nodeOf(byte[] address) {
        return connector.nodeOf(address);
    }

    @Override
    public String unavailable() {
        return connector.connected() ? null : connector.notConnected();
    }

    @Override
    public CompletableFuture<StoreReply> charge(
            byte[] address, Policy policy, long cost, long maxWaitMicros, boolean batchable) {
        CompletableFuture<StoreReply> reply = send(address, policy, cost, maxWaitMicros, batchable);
        // Only while Redis refuses writes does a reply need watching: the first one written ends the refusal.
        return outOfMemory.refusing() ? reply.whenComplete(this::noteWritten) : reply;
    }

    private void noteWritten(StoreReply reply, Throwable failure) {
        if (failure == null) {
            outOfMemory.answered();
        }
    }

    private CompletableFuture<StoreReply> send(
            byte[] address, Policy policy, long cost, long maxWaitMicros, boolean batchable) {
        if (batchable && batcher != null && !policy.hasQuotas()) { // quotas take the one-decision script
            if (maxWaitMicros == 0) {
                return batcher.submit(address, policy, cost);
            }
            if (cost > 0 && maxWaitMicros >= TokenBucket.MAX_TICKS) {
                return batcher.submitCharge(address, policy, cost);
            }
        }
        RedisScriptingAsyncCommands<byte[], byte[]> redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.failedFuture(new RedisConnectionException(connector.notConnected()));
        }
        return script.run(redis, address, arguments.of(policy, cost, maxWaitMicros))
                .thenApply(ScriptArguments::reply);
    }

    @Override
    public CompletableFuture<Boolean> exists(byte[] address) {
        return onKeys(keys -> keys.exists(address)).thenApply(count -> count > 0);
    }

    @Override
    public CompletableFuture<Void> delete(byte[] address) {
        return onKeys(keys -> keys.del(address)).thenApply(deleted -> null);
    }

    /** Runs a key command, or fails as {@link #charge} does when there is no connection. */
    private <T> CompletableFuture<T> onKeys(
            Function<RedisKeyAsyncCommands<byte[], byte[]>, CompletionStage<T>> command) {
        RedisScriptingAsyncCommands<byte[], byte[]> redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.failedFuture(new RedisConnectionException(connector.notConnected()));
        }
        return command.apply((RedisKeyAsyncCommands<byte[], byte[]>) redis).toCompletableFuture();
    }

    @Override
    public CompletableFuture<Propagation> announceChange(Policy policy, String key, boolean confirmed) {
        return changes.announce(policy.name(), key, confirmed);
    }

    @Override
    public StoreFailure classify(Throwable failure, byte[] address) {
        if (address == null) { // a probe's or a circuit's question, not one decision's
            return RedisFailures.classify(failure, timeout, "");
        }
        StoreFailure why = RedisFailures.classify(failure, timeout, address);
        if (why.cause() == Degradation.Cause.ERROR_REPLY && OutOfMemoryLog.isOutOfMemory(why.detail())) {
            outOfMemory.refused();
        }
        return why;
    }

    /**
     * Gets ready for traffic within {@code maxNanos}: waits for the connection (at most {@code connectWait},
     * as the builder waited already) and loads both scripts into Redis. Returns null once ready, or why not,
     * such as {@code not connected to Redis at HOST:PORT}.
     */
    String prepare(long maxNanos, Duration connectWait) {
        long deadline = System.nanoTime() + maxNanos;
        RedisScriptingAsyncCommands<byte[], byte[]> redis =
                connector.awaitCommands(Duration.ofNanos(Math.min(maxNanos, connectWait.toNanos())));
        if (redis == null) {
            return connector.notConnected();
        }
        try {
            CompletableFuture.allOf(
                            scripts().stream().map(each -> each.load(redis)).toArray(CompletableFuture[]::new))
                    .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            return null;
        } catch (Exception e) {
            return "loading the scripts into Redis at " + connector.target() + " failed: "
                    + RedisFailures.classify(e, timeout, "").detail();
        }
    }

    /**
     * Returns {@code duration}, checked to be positive.
     *
     * @throws IllegalArgumentException if it is zero or negative, naming it as {@code name}
     * @throws NullPointerException if it is null
     */
    static Duration positive(Duration duration, String name) {
        Objects.requireNonNull(duration, name);
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive, was " + duration);
        }
        return duration;
    }

    /**
     * Asks Redis whether it answers: {@code PING}, to every master on Redis Cluster, waiting at most {@code
     * maxWait}. Completes with an empty optional when it did, or with why not; never exceptionally.
     */
    CompletionStage<Optional<String>> ping(Duration maxWait) {
        var redis = connector.commands();
        if (redis == null) {
            return CompletableFuture.completedFuture(Optional.of(connector.notConnected()));
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
                .orTimeout(maxWait.toNanos(), TimeUnit.NANOSECONDS)
                .handle((answer, failure) -> failure == null
                        ? Optional.<String>empty()
                        : Optional.of(
                                RedisFailures.classify(failure, maxWait, "").detail()));
    }

    /** Returns the scripts this store runs, for loading them ahead of traffic. */
    List<TokenBucketScript> scripts() {
        return batcher == null ? List.of(script) : List.of(script, batcher.script());
    }

    /** Returns the SHA-1 digest of the script that decides ordinary requests. */
    String decidingScriptDigest() {
        return batcher != null ? batcher.scriptDigest() : script.digest();
    }

    /** Returns whether ordinary decisions travel in batches. */
    boolean batching() {
        return batcher != null;
    }
}
