package io.tollgate.guard;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

/**
 * One circuit breaker per node of the store, made on first use and shared by every call the node serves
 * (decisions, permits), and the watch that counts a call whose budget ran out against its breaker only if
 * the store leaves it unanswered until its stall time.
 *
 * <p>Thread-safe.
 */
final class NodeBreakers<A> implements AutoCloseable {

    private final BucketStore<A> store;
    private final GuardSettings settings;
    private final MetricsRecorder metrics;
    private final Map<String, CircuitBreaker> breakers = new ConcurrentHashMap<>();
    /** Ends the watch over a timed-out call at its stall time; null when the budget is no shorter. */
    private final Deadlines stalls;

    NodeBreakers(BucketStore<A> store, GuardSettings settings, MetricsRecorder metrics) {
        this.store = store;
        this.settings = settings;
        this.metrics = metrics;
        long untilStalled = GuardedRateLimiter.STALL_MICROS - GuardedRateLimiter.micros(settings.timeout());
        this.stalls = untilStalled > 0 ? new Deadlines(Duration.ofNanos(untilStalled * 1_000)) : null;
    }

    /**
     * Counts a call whose budget ran out against its node's circuit breaker only if it is still unanswered at
     * its stall time ({@link GuardedRateLimiter#STALL_MICROS} after it was sent), or fails for a reason on the store's side.
     */
    void watchForStall(CompletableFuture<?> sending, CircuitBreaker breaker, long sentMicros) {
        if (stalls == null) {
            breaker.onStall(sentMicros, settings.timeSource().nowMicros());
            return;
        }
        stalls.limit(sending.copy()).whenComplete((answered, failure) -> {
            if (failure instanceof TimeoutException) {
                breaker.onStall(sentMicros, settings.timeSource().nowMicros());
            } else if (failure != null && store.classify(failure, null).storeFault()) {
                breaker.onFailure(settings.timeSource().nowMicros());
            }
        });
    }

    /** Returns the worst state among the circuit breakers (one per node of the store). */
    CircuitBreaker.State worstState() {
        CircuitBreaker.State worst = CircuitBreaker.State.CLOSED;
        for (CircuitBreaker breaker : breakers.values()) {
            if (breaker.state().compareTo(worst) > 0) {
                worst = breaker.state();
            }
        }
        return worst;
    }

    /** Returns the circuit breaker of the node that serves {@code address}, made on first use. */
    CircuitBreaker of(A address) {
        String node = store.nodeOf(address);
        CircuitBreaker breaker = breakers.get(node);
        if (breaker != null) {
            return breaker;
        }
        return breakers.computeIfAbsent(node, n -> {
            CircuitBreaker created = new CircuitBreaker(
                    settings.breakerThreshold(),
                    GuardedRateLimiter.micros(settings.breakerFirstPause()),
                    GuardedRateLimiter.micros(settings.breakerLongestPause()));
            metrics.breaker(n, created);
            return created;
        });
    }

    /** Stops the stall watch's timer thread. */
    @Override
    public void close() {
        if (stalls != null) {
            stalls.close();
        }
    }
}
