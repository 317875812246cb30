package io.tollgate.internal.top;

import io.tollgate.BucketState;
import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.internal.WarmUpKeys;
import io.tollgate.internal.guard.ForwardingRateLimiter;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * Counts who a limiter limits: each refused request, and the tokens of each allowed request and each charge,
 * by policy and key, in {@link HeavyHitters}. A decorator around any limiter (in memory or on a store), on the
 * path of every surface: the proxy, the decision API, Envoy's service, the starter's filters. The warm-up's own
 * keys are not counted.
 *
 * <p>Thread-safe if the decorated limiter is.
 */
public final class CountedRateLimiter extends ForwardingRateLimiter {

    private final HeavyHitters counts;

    /**
     * @throws NullPointerException if an argument is null
     */
    public CountedRateLimiter(RateLimiter limiter, HeavyHitters counts) {
        super(limiter);
        this.counts = Objects.requireNonNull(counts, "counts");
    }

    /** Returns where the counts go. */
    public HeavyHitters counts() {
        return counts;
    }

    /** Returns the heavy hitters of the first counting decorator around {@code limiter}, or null if none is. */
    public static HeavyHitters countsOf(RateLimiter limiter) {
        RateLimiter around = limiter;
        while (around instanceof ForwardingRateLimiter forwarding) {
            if (around instanceof CountedRateLimiter counted) {
                return counted.counts;
            }
            around = forwarding.delegate();
        }
        return null;
    }

    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        return count(key, policy, cost, super.tryAcquire(key, policy, cost));
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        return super.tryAcquireAsync(key, policy, cost).thenApply(decision -> count(key, policy, cost, decision));
    }

    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        boolean granted = super.acquire(key, policy, cost, maxWait);
        count(key, policy, cost, granted);
        return granted;
    }

    @Override
    public CompletionStage<BucketState> chargeAsync(String key, Policy policy, long cost) {
        return super.chargeAsync(key, policy, cost).thenApply(state -> {
            if (!WarmUpKeys.isWarmUp(key)) {
                counts.charged(policy.name(), key, cost);
            }
            return state;
        });
    }

    @Override
    public String toString() {
        return "Counted[" + delegate() + "]";
    }

    private Decision count(String key, Policy policy, long cost, Decision decision) {
        count(key, policy, cost, decision.allowed());
        return decision;
    }

    private void count(String key, Policy policy, long cost, boolean allowed) {
        if (WarmUpKeys.isWarmUp(key)) {
            return;
        }
        if (allowed) {
            counts.charged(policy.name(), key, cost);
        } else {
            counts.refused(policy.name(), key);
        }
    }
}
