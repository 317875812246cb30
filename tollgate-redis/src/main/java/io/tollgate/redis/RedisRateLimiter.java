package io.tollgate.redis;

import io.tollgate.BucketState;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Decision;
import io.tollgate.DecisionEvent;
import io.tollgate.DecisionListener;
import io.tollgate.FailurePolicy;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.LimiterArguments;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.guard.GuardedRateLimiter;
import io.tollgate.redis.internal.RedisSettings;
import io.tollgate.redis.internal.ScriptArguments;
import io.tollgate.spi.SummaryExchange;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

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
    private final Neighbours neighbours;
    private final FailurePolicy failurePolicy;
    private final Duration timeout;
    private final byte[] summariesKey;

    RedisRateLimiter(RedisLimiterSettings<?> builder, RedisConnector connector) {
        this.connector = connector;
        this.failurePolicy = builder.failurePolicy;
        this.timeout = builder.timeout;
        BucketKeys keys = new BucketKeys(builder.keyPrefix);
        this.summariesKey = keys.summariesKey();
        this.neighbours = new Neighbours(connector, keys);
        this.store = new RedisBucketStore(
                connector,
                keys,
                new ScriptArguments(builder.clientClock),
                neighbours.changes(),
                builder.batching,
                builder.timeout);
        RedisPermits permits = new RedisPermits(connector, keys, builder.clientClock, builder.timeout);
        this.guard = new GuardedRateLimiter<>(store, permits, builder.guardSettings(LOG));
        neighbours.join(guard, builder.expectedInstances == 0, builder.timeout.multipliedBy(4));
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
        long maxNanos = Math.min(LimiterArguments.maxWaitMicros(maxTime), Long.MAX_VALUE / 4_000) * 1_000;
        long deadline = System.nanoTime() + maxNanos;
        String notReady = store.prepare(maxNanos, CONNECT_WAIT);
        if (notReady != null) {
            LOG.log(Level.WARNING, "Tollgate: not warmed up: {0}", notReady);
            return false;
        }
        return RateLimiter.super.warmUp(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }

    /**
     * Tells {@code listener} of every decision and charge from now on, on the thread that completes each (a Redis
     * I/O thread for an asynchronous decision Redis answered): Redis's with the source {@code redis}, the failure
     * policy's as {@value DecisionEvent#FALLBACK}, the deny cache's as {@value DecisionEvent#DENY_CACHE}.
     *
     * @throws NullPointerException if listener is null
     */
    @Override
    public DecisionListener.Subscription onDecision(DecisionListener listener) {
        return guard.onDecision(listener);
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
     * instance sharing the Redis forgets them too. Returns once every other instance live at the announcement
     * confirmed that it forgot them (the next request finds new buckets wherever it lands), or once a second
     * passed, naming those that did not: an instance that stopped but is still counted live (for up to three
     * seconds), or one that cannot hear Redis. Each call to Redis within the time budget.
     *
     * @return which other instances confirmed the reset, and which did not in time
     * @throws IllegalStateException if Redis cannot answer within the budget, saying why; or if the buckets were
     *     deleted but the announcement could not be sent, saying so
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    @Override
    public Propagation reset(String key, Policy policy) {
        return guard.reset(key, policy);
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
        return store.ping(RedisBucketStore.positive(maxWait, "maxWait"));
    }

    /**
     * Starts publishing {@code summaries} (asked for each time: a top-keys counter's export) through this limiter's
     * connection, at once and then every few seconds, and reading the other instances' from the same Redis, until the
     * returned exchange is closed; close it before the limiter. How the top keys of instances that share a Redis are
     * merged.
     *
     * @throws NullPointerException if summaries is null
     */
    public SummaryExchange shareSummaries(Supplier<byte[]> summaries) {
        return new SharedSummaries(connector, summariesKey, Objects.requireNonNull(summaries, "summaries"));
    }

    /**
     * Gives back the tokens that leases of hot keys hold and the permits still open (waiting at most the time budget;
     * permits not given back run out on their own), stops renewing them, and closes the connections and clients this limiter created; those
     * given to it stay open.
     */
    @Override
    public void close() {
        neighbours.leave(timeout);
        guard.close(); // gives back the open permits while the connection is still there
        neighbours.close();
        connector.close();
    }

    @Override
    public String toString() {
        return "RedisRateLimiter[" + connector.target() + ", on failure " + failurePolicy
                + (store.batching() ? ", batching" : "") + "]";
    }

    /** Returns the SHA-1 digest of the script that decides {@link #tryAcquire} (batch or one-decision). */
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

    /**
     * Returns the worst state among the circuit breakers in front of Redis (one per Cluster master, else
     * one), as the metrics name it: {@code closed} (Redis is called), {@code half_open} (a probe is let
     * through) or {@code open} (Redis is not called for now); for health checks.
     */
    public String circuitState() {
        return guard.breakerState().name().toLowerCase(Locale.ROOT);
    }

    /** Returns the tokens of the key's bucket that this instance holds in a lease now ({@link Builder#leases}). */
    public long leasedTokens(String key, Policy policy) {
        return guard.leasedTokens(policy, key);
    }

    /** Returns the other instances that share this limiter's Redis, as it knows them; for tests. */
    Neighbours neighbours() {
        return neighbours;
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
    public static final class Builder extends RedisLimiterSettings<Builder> {

        private Builder() {}
    }
}
