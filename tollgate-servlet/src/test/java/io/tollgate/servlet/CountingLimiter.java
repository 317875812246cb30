package io.tollgate.servlet;

import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/** Passes every call to a real limiter and counts the asynchronous ones, so a test can wait for them. */
final class CountingLimiter implements RateLimiter {

    private final RateLimiter limiter;
    private final AtomicInteger asyncCalls = new AtomicInteger();

    CountingLimiter(RateLimiter limiter) {
        this.limiter = limiter;
    }

    int asyncCalls() {
        return asyncCalls.get();
    }

    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        return limiter.tryAcquire(key, policy, cost);
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        asyncCalls.incrementAndGet();
        return limiter.tryAcquireAsync(key, policy, cost);
    }

    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        return limiter.acquire(key, policy, cost, maxWait);
    }
}
