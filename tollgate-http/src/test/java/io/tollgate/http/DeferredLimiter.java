package io.tollgate.http;

import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A limiter whose asynchronous decisions complete a little later on another thread, as a store's do: the
 * path a Redis limiter takes, without needing Redis for a unit test of the HTTP layer.
 */
final class DeferredLimiter implements RateLimiter {

    private final RateLimiter decider;
    private final AtomicInteger calls = new AtomicInteger();

    DeferredLimiter(RateLimiter decider) {
        this.decider = decider;
    }

    int calls() {
        return calls.get();
    }

    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        calls.incrementAndGet();
        return decider.tryAcquire(key, policy, cost);
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        calls.incrementAndGet();
        Decision decision = decider.tryAcquire(key, policy, cost);
        return CompletableFuture.supplyAsync(
                () -> decision, CompletableFuture.delayedExecutor(2, TimeUnit.MILLISECONDS));
    }

    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        calls.incrementAndGet();
        return decider.acquire(key, policy, cost, maxWait);
    }
}
