package io.tollgate.guard;

import io.tollgate.BucketState;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Decision;
import io.tollgate.DecisionEvent;
import io.tollgate.DecisionListener;
import io.tollgate.DecisionListeners;
import io.tollgate.FailurePolicy;
import io.tollgate.LimiterArguments;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.TokenBucket;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;

/**
 * A rate limiter over a {@link BucketStore}, and everything a store needs around it: the time budget, a
 * circuit breaker per node, the failure policy and its {@code LOCAL} fallback on the last state the store
 * reported, the deny cache and the metrics. A decision walks down to the store once and back once; a
 * store's answer that comes after the budget ran out still teaches, and settles any difference from what
 * the failure policy decided (see {@link GuardedCall}).
 *
 * <p>Each concern has a class of its own: {@link GuardedCall} (one decision on its way),
 * {@link FallbackDecisions} (the failure policy), {@link NodeBreakers} (a circuit breaker per node),
 * {@link StoreAdjustments} (charges and refunds without a budget), {@link OperatorCalls} (inspect, reset) and
 * {@link GuardedPermits} (concurrency limits); this class wires them and is the limiter's face.
 *
 * <p>Thread-safe.
 *
 * @param <A> where the store keeps a key's buckets
 */
public final class GuardedRateLimiter<A> implements RateLimiter, AutoCloseable {

    /** How long a degraded refusal ({@link FailurePolicy#DENY}) tells the client to wait. */
    static final long DEGRADED_RETRY_MICROS = 1_000_000;

    /**
     * How long after it was sent a call still unanswered counts against the store, for its circuit breaker:
     * half a second. A call that misses the budget but is answered before this shows the store alive, if slow
     * (a busy machine, a collection, a JIT compile), and opens no circuit.
     */
    static final long STALL_MICROS = 500_000;

    /**
     * How long the store must have left calls unanswered before it counts as down, for {@code LOCAL} to decide on
     * its own bucket while the circuit is open: two seconds. Until then a circuit opened by calls left unanswered
     * answers at once, but {@code LOCAL} refuses as while the store is late: on a machine so busy that it read no
     * answer for half a second, the store may well be deciding those calls.
     */
    public static final long DOWN_AFTER_MICROS = 2_000_000;

    /** The longest wait of a charge that must land whatever the bucket holds: every charge but the largest. */
    static final long ANY_WAIT_MICROS = TokenBucket.MAX_TICKS;

    final BucketStore<A> store;
    final GuardSettings settings;
    final TimeSource time;
    final Deadlines deadlines;

    final DenyCache denyCache;
    final ChangesHeard changesHeard;
    final LocalBuckets local;
    final UnseenCharges unseen;
    final DegradationLog degradations;
    /** Logs the degraded decisions held back, every second. */
    private final ScheduledFuture<?> flushing;

    final FallbackDecisions fallbacks;
    final StoreAdjustments<A> adjustments;

    final OperatorCalls<A> operatorCalls;

    final MetricsRecorder metrics;
    /** Told of every decision and charge: the metrics' recorder first, then whoever {@link #onDecision} added. */
    final DecisionListeners listeners = new DecisionListeners();
    /** The source of the store's own decisions, for the listeners and the metrics. */
    final String source;

    /** The leases of hot keys, if any policy is leased; null if none is. */
    final Leases<A> leases;

    /** The way of a request that may be answered without the store: a lease, the deny cache, then the store. */
    private final DecisionRoute<A> route;

    /** The permits of concurrency limits, if the store keeps them; null if it does not. */
    private final GuardedPermits<A> permits;

    final NodeBreakers<A> breakers;
    /** How many instances were live when the store last said; 1 until it does. */
    private volatile int liveInstances = 1;

    /** Guards {@code store}, which keeps no permits, as {@code settings} say. */
    public GuardedRateLimiter(BucketStore<A> store, GuardSettings settings) {
        this(store, null, settings);
    }

    /**
     * Guards {@code store} and the permits of concurrency limits it keeps ({@code permits}, null if none) as
     * {@code settings} say: one time budget, failure policy, circuit breaker per node and metrics for both.
     */
    public GuardedRateLimiter(BucketStore<A> store, PermitStore<A> permits, GuardSettings settings) {
        this.store = store;
        this.settings = settings;
        this.time = settings.timeSource();
        this.deadlines = new Deadlines(settings.timeout());
        this.denyCache = settings.denyCacheKeys() > 0
                ? new DenyCache(settings.denyCacheKeys(), micros(settings.denyCacheMaxAge()), time)
                : null;
        this.changesHeard = new ChangesHeard(LocalBuckets.DEFAULT_KEYS, time);
        this.local = new LocalBuckets(LocalBuckets.DEFAULT_KEYS, this::instances, time);
        this.unseen = new UnseenCharges(LocalBuckets.DEFAULT_KEYS);
        this.degradations = new DegradationLog(time, settings.log(), store.name());
        this.flushing = DegradationLog.flushEverySecond(degradations);
        this.fallbacks = new FallbackDecisions(settings, local, degradations, store.name());
        this.adjustments = new StoreAdjustments<>(this);
        this.operatorCalls = new OperatorCalls<>(this);
        this.metrics = settings.metrics();
        if (metrics != MetricsRecorder.NONE) {
            listeners.add(metrics.decisions());
        }
        this.breakers = new NodeBreakers<>(store, settings, metrics);
        this.source = store.name().toLowerCase(Locale.ROOT);
        this.permits = permits == null ? null : new GuardedPermits<>(this, permits);
        this.leases = settings.leasedPolicies().isEmpty()
                ? null
                : new Leases<>(this, settings.leasedPolicies(), LocalBuckets.DEFAULT_KEYS);
        this.route = new DecisionRoute<>(this);
    }

    /** Decides within the time budget; if the store cannot, the failure policy does. */
    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        return tryAcquireAsync(key, policy, cost).toCompletableFuture().join();
    }

    /** Decides without blocking; the stage completes within the budget, never exceptionally for a fault. */
    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        LimiterArguments.checkRequest(key, policy, cost);
        return route.decide(key, policy, cost, time.nowMicros());
    }

    /**
     * Blocks until the tokens are taken, reserving them ahead in the store so that waiting callers on every
     * instance are served in turn. If the store cannot decide, the failure policy does: {@code ALLOW} returns
     * true at once, {@code DENY} false, {@code LOCAL} waits on this instance's bucket of the key.
     */
    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        LimiterArguments.checkRequest(key, policy, cost);
        long maxWaitMicros = LimiterArguments.acquireWaitMicros(maxWait);
        long now = time.nowMicros();
        if (denyCache != null && denyCache.refusedForMicros(policy, key, cost, now) > maxWaitMicros) {
            listeners.decided(key, policy, cost, false, DecisionEvent.DENY_CACHE);
            return false;
        }
        GuardedCall<A> call = new GuardedCall<>(this, key, policy, cost, true, maxWaitMicros, now);
        if (!call.start().join().allowed()) {
            return false;
        }
        time.sleepMicros(call.waitMicros());
        return true;
    }

    /** Tells {@code listener} of every decision and charge from now on, on the thread that completes each. */
    @Override
    public DecisionListener.Subscription onDecision(DecisionListener listener) {
        return listeners.add(listener);
    }

    /**
     * Takes a slot of {@code limit} for {@code key} in the store within the time budget, under the circuit
     * breaker of the node that serves it; if the store cannot decide, the limit's failure policy does ({@link
     * GuardedPermits}). Never completes exceptionally for a store fault.
     *
     * @throws UnsupportedOperationException if the store keeps no permits
     */
    @Override
    public CompletionStage<Permit> tryAcquirePermitAsync(String key, ConcurrencyLimit limit) {
        LimiterArguments.checkPermit(key, limit);
        return permitsOrRefuse().tryAcquire(key, limit);
    }

    /**
     * Returns how many permits of the key are open in the store. Within the budget.
     *
     * @throws IllegalStateException if the store cannot answer within the budget, saying why
     * @throws UnsupportedOperationException if the store keeps no permits
     */
    @Override
    public int inFlight(String key, ConcurrencyLimit limit) {
        LimiterArguments.checkPermit(key, limit);
        return permitsOrRefuse().inFlight(key, limit);
    }

    private GuardedPermits<A> permitsOrRefuse() {
        if (permits == null) {
            throw new UnsupportedOperationException(store.name() + " keeps no permits of concurrency limits");
        }
        return permits;
    }

    /**
     * Returns what the key's buckets hold in the store now, without taking anything. Within the budget.
     *
     * @throws IllegalStateException if the store cannot answer within the budget, saying why
     */
    @Override
    public BucketState inspect(String key, Policy policy) {
        return operatorCalls.inspect(key, policy);
    }

    /**
     * Says whether the store keeps the key's buckets now. Within the budget.
     *
     * @throws IllegalStateException if the store cannot answer within the budget, saying why
     */
    @Override
    public boolean holds(String key, Policy policy) {
        return operatorCalls.holds(key, policy);
    }

    /**
     * Deletes the key's buckets in the store, forgets what this instance knew of them, and tells the other
     * instances sharing the store to forget it too; returns once each live one confirmed, or once {@link
     * BucketStore#CONFIRMED_WITHIN} passed. Each call to the store within the budget.
     *
     * @throws IllegalStateException if the store cannot answer within the budget, saying why; or if the buckets
     *     were deleted but the other instances could not be told, saying so
     */
    @Override
    public Propagation reset(String key, Policy policy) {
        return operatorCalls.reset(key, policy);
    }

    /**
     * Forgets what this instance remembers of the key's buckets (a refusal, the fallback's copy), because another
     * instance sharing the store changed them outside a request: reset them, or gave tokens back. An answer to a
     * request sent before this call is not learnt either: the store may have decided it before the change.
     * Called by the store's channel of announcements ({@link BucketStore#announceChange}); thread-safe and quick.
     */
    public void changedElsewhere(String policyName, String key) {
        changesHeard.heard(policyName, key);
        forget(policyName, key);
    }

    /**
     * Forgets every refusal this instance remembers: its channel of announcements was (re)subscribed, and it may
     * have missed some. The fallback's copy of each bucket is kept for {@code LOCAL}, until the store answers.
     */
    public void changesMayHaveBeenMissed() {
        if (denyCache != null) {
            denyCache.clear();
        }
    }

    void forget(String policyName, String key) {
        if (leases != null) {
            leases.forget(policyName, key);
        }
        local.forget(policyName, key);
        if (denyCache != null) {
            denyCache.forget(policyName, key);
        }
    }

    /**
     * Gives back the tokens of leases and the permits still open (waiting at most the budget for each), stops the
     * budget's timer thread, and logs the degraded decisions not logged yet.
     */
    @Override
    public void close() {
        if (leases != null) {
            leases.close(micros(settings.timeout()));
        }
        if (permits != null) {
            permits.close();
        }
        flushing.cancel(false);
        degradations.flushAll();
        deadlines.close();
        breakers.close();
    }

    /** Notes how many instances share the store (this one included): {@code LOCAL} decides on that share. */
    public void instancesCounted(int live) {
        liveInstances = Math.max(1, live);
    }

    /**
     * Returns how many instances {@code LOCAL} shares each limit with, this one included: the settings' {@code
     * expectedInstances} if given, else the live instances the store last counted.
     */
    public int instances() {
        return settings.expectedInstances() > 0 ? settings.expectedInstances() : liveInstances;
    }

    /** Returns the worst state among the circuit breakers (one per node of the store). */
    public CircuitBreaker.State breakerState() {
        return breakers.worstState();
    }

    /** Returns how long the deny cache will refuse a request of {@code cost} for the key, in µs; for tests. */
    public long cachedRefusalMicros(Policy policy, String key, long cost) {
        return denyCache == null ? 0 : denyCache.refusedForMicros(policy, key, cost, time.nowMicros());
    }

    /** Returns when the key's bucket is full again as this instance knows it, in µs from now; for tests. */
    public long knownUntilFullMicros(Policy policy, String key) {
        return local.untilFullMicros(policy, key);
    }

    /**
     * Gives the tokens back in the store, without a budget: a refund that arrives late is still a refund; then
     * tells the other instances sharing the store, so that none keeps refusing the key on what it remembers. The
     * stage completes once both are done (a failed announcement leaves the refund in place). Decisions the failure
     * policy made took nothing from the store, and are not given back here.
     */
    @Override
    public CompletionStage<Void> refundAsync(String key, Policy policy, long cost) {
        LimiterArguments.checkCharge(key, policy, cost); // what a charge took may be given back at once
        // Any wait: a refund must land on a bucket in debt too (tokens taken ahead, or charged after the fact)
        return adjustments.adjust(key, policy, -cost, ANY_WAIT_MICROS).thenApply(reply -> null);
    }

    /**
     * Takes {@code cost} from the buckets in the store whatever they hold, into debt if they hold less but no
     * deeper than the policy's maximum debt, without a budget: a cost known after the fact is owed however late it
     * lands. What this instance knows of the buckets follows. The stage fails, and nothing is charged, if the
     * store cannot be asked.
     */
    @Override
    public CompletionStage<BucketState> chargeAsync(String key, Policy policy, long cost) {
        LimiterArguments.checkCharge(key, policy, cost);
        return adjustments.adjust(key, policy, cost, ANY_WAIT_MICROS).thenApply(reply -> {
            listeners.charged(key, policy, cost, source);
            return BucketState.of(policy.limits(), reply.debtsAfterCharge(policy, cost, ANY_WAIT_MICROS));
        });
    }

    /** Returns how many tokens this instance holds in the lease of the key now; for tests. */
    public long leasedTokens(Policy policy, String key) {
        return leases == null ? 0 : leases.held(policy.name(), key);
    }

    /** Returns how many slices of hot keys' buckets this instance has taken into leases; for tests. */
    public long leaseSlicesTaken() {
        return leases == null ? 0 : leases.slicesTaken();
    }

    /** Returns how many keys have admissions waiting to be charged to the store; for tests. */
    public int unseenWaiting() {
        return unseen.waiting();
    }

    /** Returns how many waiting charges (one per key) the store has taken since this limiter was built; for tests. */
    public long unseenCharged() {
        return unseen.charged();
    }

    static long micros(Duration duration) {
        return LimiterArguments.maxWaitMicros(duration);
    }
}
