package io.tollgate.internal.guard;

import io.tollgate.BucketState;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Decision;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import io.tollgate.RateLimiter;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * A limiter that passes every call to another: the base of the decorators that add one thing around a limiter
 * (its metrics, who it limits), which override only the calls they observe. Methods that the interface builds
 * from others ({@code tryAcquire(key, policy)}, {@code charge}) are not forwarded, so that they pass through the
 * decorator's overrides.
 *
 * <p>Thread-safe if the decorated limiter is.
 */
public abstract class ForwardingRateLimiter implements RateLimiter {

    private final RateLimiter delegate;

    /**
     * @throws NullPointerException if delegate is null
     */
    protected ForwardingRateLimiter(RateLimiter delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** Returns the limiter this passes calls to. */
    public final RateLimiter delegate() {
        return delegate;
    }

    /** Returns the limiter under every forwarding decorator around {@code limiter}, or {@code limiter} itself. */
    public static RateLimiter innermost(RateLimiter limiter) {
        RateLimiter inner = limiter;
        while (inner instanceof ForwardingRateLimiter forwarding) {
            inner = forwarding.delegate;
        }
        return inner;
    }

    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        return delegate.tryAcquire(key, policy, cost);
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        return delegate.tryAcquireAsync(key, policy, cost);
    }

    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        return delegate.acquire(key, policy, cost, maxWait);
    }

    @Override
    public CompletionStage<Void> refundAsync(String key, Policy policy, long cost) {
        return delegate.refundAsync(key, policy, cost);
    }

    @Override
    public CompletionStage<BucketState> chargeAsync(String key, Policy policy, long cost) {
        return delegate.chargeAsync(key, policy, cost);
    }

    @Override
    public CompletionStage<Permit> tryAcquirePermitAsync(String key, ConcurrencyLimit limit) {
        return delegate.tryAcquirePermitAsync(key, limit);
    }

    @Override
    public Permit tryAcquirePermit(String key, ConcurrencyLimit limit) {
        return delegate.tryAcquirePermit(key, limit);
    }

    @Override
    public int inFlight(String key, ConcurrencyLimit limit) {
        return delegate.inFlight(key, limit);
    }

    @Override
    public BucketState inspect(String key, Policy policy) {
        return delegate.inspect(key, policy);
    }

    @Override
    public boolean holds(String key, Policy policy) {
        return delegate.holds(key, policy);
    }

    @Override
    public Propagation reset(String key, Policy policy) {
        return delegate.reset(key, policy);
    }

    @Override
    public boolean warmUp(Duration maxTime) {
        return delegate.warmUp(maxTime);
    }
}
