package io.tollgate.guard;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.InFlightSlots;
import io.tollgate.LimiterArguments;
import io.tollgate.Permit;
import java.util.concurrent.CompletableFuture;

/**
 * The permits of concurrency limits through the guard: each acquisition is one call to the {@link PermitStore}
 * raced against the same time budget as a decision, under the circuit breaker of the node that serves it, and
 * counted in the same metrics. When the store cannot decide, the limit's failure policy does: {@code ALLOW}
 * grants a permit that holds no slot, {@code DENY} refuses, {@code LOCAL} counts this instance's permits
 * against its share of the limit ({@code maxInFlight} divided by the instances sharing the store, at least 1).
 * A slot the store took after the budget ran out is given back at once.
 *
 * <p>Thread-safe.
 */
final class GuardedPermits<A> {

    private final GuardedRateLimiter<A> guard;
    private final PermitStore<A> permits;
    private final InFlightSlots local = new InFlightSlots();

    GuardedPermits(GuardedRateLimiter<A> guard, PermitStore<A> permits) {
        this.guard = guard;
        this.permits = permits;
    }

    /** Takes a slot; the stage completes within the budget, never exceptionally for a store fault. */
    CompletableFuture<Permit> tryAcquire(String key, ConcurrencyLimit limit) {
        A address = permits.address(key, limit);
        CircuitBreaker breaker = guard.breakers.of(address);
        long sentMicros = guard.time.nowMicros();
        if (!breaker.tryCall(sentMicros)) {
            return CompletableFuture.completedFuture(failed(
                    key,
                    limit,
                    new StoreFailure(
                            Degradation.Cause.CIRCUIT_OPEN,
                            guard.store.name() + " failed repeatedly; not called for now",
                            true)));
        }
        String unavailable = guard.store.unavailable();
        if (unavailable != null) {
            breaker.onFailure(sentMicros);
            return CompletableFuture.completedFuture(
                    failed(key, limit, new StoreFailure(Degradation.Cause.UNREACHABLE, unavailable, true)));
        }
        CompletableFuture<Permit> sending;
        try {
            sending = permits.acquire(address, limit);
        } catch (RuntimeException e) {
            sending = CompletableFuture.failedFuture(e);
        }
        // The budget ends a copy, never the call itself, whose late answer must still be seen.
        CompletableFuture<Permit> inTime = new CompletableFuture<>();
        sending.whenComplete((permit, failure) -> {
            boolean first = failure == null ? inTime.complete(permit) : inTime.completeExceptionally(failure);
            if (!first && failure == null) {
                breaker.onLateAnswer();
                guard.metrics.answered(Math.max(0, guard.time.nowMicros() - sentMicros));
                if (permit.acquired()) {
                    permit.releaseAsync(); // the failure policy decided instead: this slot must not be held
                }
            }
        });
        CompletableFuture<Permit> sent = sending;
        return guard.deadlines.limit(inTime).handle((permit, failure) -> {
            long now = guard.time.nowMicros();
            if (failure == null) {
                breaker.onSuccess();
                guard.metrics.answered(Math.max(0, now - sentMicros));
                guard.metrics.permitDecided(limit, permit.acquired(), guard.source);
                return permit;
            }
            StoreFailure why = guard.store.classify(failure, address);
            if (why.cause() == Degradation.Cause.TIMEOUT) {
                guard.breakers.watchForStall(sent, breaker, sentMicros); // a late answer proves the store alive
            } else if (why.storeFault()) {
                breaker.onFailure(now);
            } else {
                breaker.onSuccess(); // the store answered; only this key's value is wrong
            }
            return failed(key, limit, why);
        });
    }

    /** Decides as the limit's failure policy says, for a store that could not. */
    private Permit failed(String key, ConcurrencyLimit limit, StoreFailure why) {
        guard.metrics.failed(why.cause());
        FailurePolicy policy = guard.settings.failurePolicy(limit.name());
        Degradation degradation = new Degradation(why.cause(), policy, why.detail());
        Permit decided = switch (policy) {
            case ALLOW -> InFlightSlots.grantedWithoutSlot(limit, degradation);
            case DENY -> InFlightSlots.refused(limit, 0, degradation);
            case LOCAL ->
                local.tryAcquire(
                        LimiterArguments.boundedKey(key),
                        limit,
                        Math.max(1, limit.maxInFlight() / Math.max(1, guard.instances())),
                        degradation);
        };
        guard.metrics.permitDecided(limit, decided.acquired(), MetricsRecorder.FALLBACK);
        return decided;
    }

    /** Counts the slots held in the store, within the budget; throws {@link IllegalStateException} saying why not. */
    int inFlight(String key, ConcurrencyLimit limit) {
        A address = permits.address(key, limit);
        try {
            return guard.operatorCalls.await(address, () -> permits.count(address, limit));
        } catch (IllegalStateException e) {
            throw new IllegalStateException("cannot count the permits in flight: " + e.getMessage(), e);
        }
    }

    /** Gives back the permits still open, waiting at most the budget. */
    void close() {
        permits.close(guard.settings.timeout());
    }
}
