package io.tollgate.guard;

import io.tollgate.Decision;
import io.tollgate.DecisionEvent;
import io.tollgate.Degradation;
import io.tollgate.Policy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The way of one decision, from the cheapest answer to the dearest: the key's lease, if it holds the tokens
 * ({@link Leases}); a refusal the deny cache remembers, or the answer another request for the key is about to
 * bring ({@link DenyCache}); else the store, within the budget ({@link GuardedCall}).
 *
 * <p>Thread-safe: it keeps nothing of its own.
 */
final class DecisionRoute<A> {

    private final GuardedRateLimiter<A> guard;

    DecisionRoute(GuardedRateLimiter<A> guard) {
        this.guard = guard;
    }

    /** Decides a request that arrived at {@code startMicros}, within the budget counted from then. */
    CompletableFuture<Decision> decide(String key, Policy policy, long cost, long startMicros) {
        if (guard.leases != null && guard.leases.covers(policy)) {
            Decision leased = guard.leases.tryTake(policy, key, cost, startMicros);
            if (leased != null) {
                guard.listeners.decided(key, policy, cost, true, DecisionEvent.LEASE);
                return CompletableFuture.completedFuture(leased);
            }
        }
        return withoutLease(key, policy, cost, startMicros);
    }

    /** Decides by the deny cache or the store, within the budget counted from {@code startMicros}. */
    private CompletableFuture<Decision> withoutLease(String key, Policy policy, long cost, long startMicros) {
        long now = guard.time.nowMicros();
        DenyCache.Lookup lookup = guard.denyCache == null ? null : guard.denyCache.lookup(policy, key, cost, now);
        if (lookup != null && lookup.refusal() != null) {
            guard.listeners.decided(key, policy, cost, false, DecisionEvent.DENY_CACHE);
            return CompletableFuture.completedFuture(lookup.refusal());
        }
        if (lookup != null && !lookup.probing() && lookup.probe() != null) {
            // Another request for this key is asking the store: decide again once it has the answer.
            long left = GuardedRateLimiter.micros(guard.settings.timeout()) - (now - startMicros);
            if (left <= 0) {
                return CompletableFuture.completedFuture(waitedTooLong(key, policy, cost));
            }
            return lookup.probe()
                    .copy() // the probe is shared: time out this waiter only
                    .orTimeout(left, TimeUnit.MICROSECONDS)
                    .handle((done, failure) -> failure)
                    .thenCompose(failure -> failure != null
                            ? CompletableFuture.completedFuture(waitedTooLong(key, policy, cost))
                            : withoutLease(key, policy, cost, startMicros));
        }
        CompletableFuture<Decision> decision = new GuardedCall<>(guard, key, policy, cost, false, 0, now).start();
        if (lookup != null && lookup.probing()) {
            decision.whenComplete((decided, failure) -> guard.denyCache.probed(policy, key, lookup.probe()));
        }
        return decision;
    }

    /**
     * Decides by the failure policy for a request whose budget ran out while it waited for another request
     * for its key to ask the store; if that admits it, it is charged to the store.
     */
    private Decision waitedTooLong(String key, Policy policy, long cost) {
        guard.metrics.failed(Degradation.Cause.TIMEOUT);
        Decision decided = guard.fallbacks.decide(
                false, // Redis is late
                key,
                policy,
                cost,
                guard.fallbacks.degradation(
                        policy,
                        Degradation.Cause.TIMEOUT,
                        "no answer within " + guard.settings.timeout().toMillis() + " ms for key '" + key + "'"));
        if (decided.allowed()) {
            guard.adjustments.adjust(key, policy, cost, GuardedRateLimiter.ANY_WAIT_MICROS);
        }
        guard.listeners.decided(key, policy, cost, decided.allowed(), DecisionEvent.FALLBACK);
        return decided;
    }
}
