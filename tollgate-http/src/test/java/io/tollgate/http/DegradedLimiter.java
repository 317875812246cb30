package io.tollgate.http;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.InFlightSlots;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A limiter whose store never answers in time, so every decision is made by its failure policy: what a
 * Redis limiter returns while Redis is down, without needing one for a unit test of the HTTP layer.
 */
final class DegradedLimiter implements RateLimiter {

    private final FailurePolicy fallback;

    DegradedLimiter(FailurePolicy fallback) {
        this.fallback = fallback;
    }

    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        boolean allowed = fallback == FailurePolicy.ALLOW;
        return new Decision(
                allowed,
                policy.limits().get(0),
                0,
                allowed ? policy.limits().get(0).capacity() : 0,
                allowed ? 0 : 1_000_000,
                0,
                new Degradation(Degradation.Cause.TIMEOUT, fallback, "no answer within 50 ms"));
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        return CompletableFuture.completedFuture(tryAcquire(key, policy, cost));
    }

    @Override
    public CompletionStage<Permit> tryAcquirePermitAsync(String key, ConcurrencyLimit limit) {
        Degradation degradation = new Degradation(Degradation.Cause.TIMEOUT, fallback, "no answer within 50 ms");
        return CompletableFuture.completedFuture(
                fallback == FailurePolicy.DENY
                        ? InFlightSlots.refused(limit, 0, degradation)
                        : InFlightSlots.grantedWithoutSlot(limit, degradation));
    }

    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) {
        return tryAcquire(key, policy, cost).allowed();
    }
}
