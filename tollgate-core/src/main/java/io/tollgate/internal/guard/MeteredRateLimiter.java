package io.tollgate.internal.guard;

import io.tollgate.Decision;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * The guard of a limiter that decides in this process, such as {@link io.tollgate.InMemoryRateLimiter}: such a
 * limiter cannot time out, fail or answer late, so of everything {@link GuardedRateLimiter} does around a
 * store only the metrics apply. This reports each decision, and each reservation granted or refused, to a
 * {@link MetricsRecorder}, and passes everything else through: arguments are checked by the limiter it
 * decorates, which keeps its own hot path (a few tens of nanoseconds) free of anything a remote store needs.
 *
 * <p>Thread-safe if the decorated limiter is.
 */
public final class MeteredRateLimiter extends ForwardingRateLimiter {

    private final MetricsRecorder metrics;
    private final String source;

    /**
     * Reports the decisions of {@code limiter} to {@code metrics}.
     *
     * @param source where the decisions come from, as the metrics name it, such as {@code memory}
     * @throws NullPointerException if an argument is null
     */
    public MeteredRateLimiter(RateLimiter limiter, MetricsRecorder metrics, String source) {
        super(limiter);
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.source = Objects.requireNonNull(source, "source");
    }

    @Override
    public Decision tryAcquire(String key, Policy policy, long cost) {
        Decision decision = super.tryAcquire(key, policy, cost);
        metrics.decided(policy, decision.allowed(), source);
        return decision;
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
        return super.tryAcquireAsync(key, policy, cost).thenApply(decision -> {
            metrics.decided(policy, decision.allowed(), source);
            return decision;
        });
    }

    @Override
    public boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException {
        boolean granted = super.acquire(key, policy, cost, maxWait);
        metrics.decided(policy, granted, source);
        return granted;
    }

    /** Returns the limiter whose decisions this reports. */
    public RateLimiter limiter() {
        return delegate();
    }

    @Override
    public String toString() {
        return "Metered[" + delegate() + "]";
    }
}
