package io.tollgate.guard;

import io.tollgate.Decision;
import io.tollgate.DecisionEvent;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Policy;
import io.tollgate.PolicyArithmetic;
import java.util.concurrent.CompletableFuture;

/**
 * One request on its way to the store, raced against the time budget. The answer comes from the store if
 * it answers in time, else from the failure policy; either way the store's answer, when it comes, updates
 * what this instance knows, and a late one settles any difference from the failure policy's decision.
 *
 * <p>Used once, by one request; its late answer may come on another thread, hence the lock.
 */
final class GuardedCall<A> {

    private final GuardedRateLimiter<A> guard;
    private final String key;
    private final Policy policy;
    private final long cost;
    private final boolean reserving;
    private final long maxWaitMicros;
    private final long sentMicros;
    private final A address;
    private CircuitBreaker breaker;
    /** The call to the store, once sent. */
    private CompletableFuture<StoreReply> sending;
    /** For a reservation: how long to wait before using the tokens. */
    private long waitMicros;
    /** Guarded by this: the failure policy's decision, once the budget ran out. */
    private Decision fallback;
    /** Guarded by this: the store's decision, if it came after the budget ran out but before the fallback. */
    private Decision lateAnswer;

    /**
     * @param reserving whether this is a reservation ({@link GuardedRateLimiter#acquire}), which may take
     *     tokens ahead of time as far as {@code maxWaitMicros} allows, and then tells how long to wait
     */
    GuardedCall(
            GuardedRateLimiter<A> guard,
            String key,
            Policy policy,
            long cost,
            boolean reserving,
            long maxWaitMicros,
            long sentMicros) {
        this.guard = guard;
        this.key = key;
        this.policy = policy;
        this.cost = cost;
        this.reserving = reserving;
        this.maxWaitMicros = maxWaitMicros;
        this.sentMicros = sentMicros;
        this.address = guard.store.address(key, policy);
    }

    /** Sends the request; the stage completes within the budget, never exceptionally. */
    CompletableFuture<Decision> start() {
        breaker = guard.breakers.of(address);
        if (!breaker.tryCall(sentMicros)) {
            guard.metrics.failed(Degradation.Cause.CIRCUIT_OPEN);
            return CompletableFuture.completedFuture(decideWithout(guard.fallbacks.degradation(
                    policy,
                    Degradation.Cause.CIRCUIT_OPEN,
                    guard.store.name() + " failed repeatedly; not called for now")));
        }
        String unavailable = guard.store.unavailable();
        if (unavailable != null) {
            return CompletableFuture.completedFuture(
                    failed(new StoreFailure(Degradation.Cause.UNREACHABLE, unavailable, true)));
        }
        try {
            sending = guard.store.charge(address, policy, cost, maxWaitMicros, maxWaitMicros == 0);
        } catch (RuntimeException e) {
            sending = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<StoreReply> inTime = new CompletableFuture<>();
        sending.whenComplete((reply, failure) -> {
            boolean first = failure == null ? inTime.complete(reply) : inTime.completeExceptionally(failure);
            if (!first && failure == null) {
                late(reply);
            }
        });
        return guard.deadlines
                .limit(inTime, sending instanceof StoreAnswer answer ? answer : null)
                .handle((reply, failure) ->
                        failure == null ? answered(reply) : failed(guard.store.classify(failure, address)));
    }

    /** For a reservation that was allowed: how long to wait before using the tokens, in µs. */
    long waitMicros() {
        return waitMicros;
    }

    /** The store answered within the budget: its decision is the answer. */
    private Decision answered(StoreReply reply) {
        breaker.onSuccess();
        guard.adjustments.storeAnswered();
        Decision decision = learn(reply);
        if (reserving && decision.allowed()) {
            waitMicros = reply.waitMicros(policy, cost);
        }
        guard.listeners.decided(key, policy, cost, decision.allowed(), guard.source);
        return decision;
    }

    /** The store answered after the budget ran out: it still teaches, and settles with the fallback. */
    private void late(StoreReply reply) {
        breaker.onLateAnswer();
        guard.adjustments.storeAnswered();
        Decision decision = learn(reply);
        Decision decidedInstead;
        synchronized (this) {
            decidedInstead = fallback;
            if (decidedInstead == null) {
                lateAnswer = decision; // the fallback is being decided: it settles when it is
                return;
            }
        }
        settle(decidedInstead, decision);
    }

    /** Takes note of what the store reported and returns its decision on this request. */
    private Decision learn(StoreReply reply) {
        long now = guard.time.nowMicros();
        guard.metrics.answered(Math.max(0, now - sentMicros));
        Decision decision = reply.decision(policy, cost, maxWaitMicros);
        if (reply.superseded()) {
            return decision; // a later request's reply teaches the same, newer: learning this too would be undone
        }
        if (guard.changesHeard.heardSince(policy.name(), key, sentMicros)) {
            return decision; // the store may have decided this before a change another instance announced
        }
        long[] debtsAfter = reply.debtsAfter(policy, cost, decision.allowed());
        if (guard.denyCache != null) {
            // What the store would answer the next request of this cost, had nobody else taken tokens meanwhile:
            // after the admission that took the last tokens, a refusal known without asking the store again. An
            // admission that left at least the cost in its tightest limit or quota leaves the next one allowed.
            Decision next = decision.allowed() && decision.remaining() < cost
                    ? PolicyArithmetic.decide(policy, debtsAfter, cost, 0, reply.nowMicros())
                    : decision;
            guard.denyCache.update(policy, key, cost, sentMicros, next);
        }
        guard.local.learn(policy, key, debtsAfter, reply.nowMicros(), sentMicros, now);
        return decision;
    }

    /** The store did not decide: the failure policy does; a timed-out request may still be answered late. */
    private Decision failed(StoreFailure failure) {
        if (failure.cause() == Degradation.Cause.TIMEOUT && sending != null) {
            guard.breakers.watchForStall(sending, breaker, sentMicros); // a late answer proves the store alive
        } else if (failure.storeFault()) {
            breaker.onFailure(guard.time.nowMicros());
        } else {
            breaker.onSuccess(); // the store answered; only this key's value is wrong
        }
        guard.metrics.failed(failure.cause());
        Decision decided = decideWithout(guard.fallbacks.degradation(policy, failure.cause(), failure.detail()));
        Decision late;
        synchronized (this) {
            fallback = decided;
            late = lateAnswer;
        }
        if (late != null) {
            settle(decided, late);
        }
        return decided;
    }

    /**
     * Decides by the failure policy. A request that {@code LOCAL} admits while the store cannot be asked (the
     * breaker is open, or the store is unreachable) is noted, to be charged once it answers again.
     */
    private Decision decideWithout(Degradation degradation) {
        boolean storeDown = switch (degradation.cause()) {
            // Late, or not called: down only once the store has left calls unanswered long enough
            case TIMEOUT, CIRCUIT_OPEN -> breaker.down(guard.time.nowMicros(), GuardedRateLimiter.DOWN_AFTER_MICROS);
            case UNREACHABLE, ERROR_REPLY -> true;
        };
        Decision decided = reserving
                ? reserveWithout(degradation, storeDown)
                : guard.fallbacks.decide(storeDown, key, policy, cost, degradation);
        boolean unseenByStore = degradation.cause() == Degradation.Cause.CIRCUIT_OPEN
                || degradation.cause() == Degradation.Cause.UNREACHABLE;
        if (decided.allowed() && unseenByStore && degradation.fallback() == FailurePolicy.LOCAL) {
            guard.adjustments.noteUnseen(policy, key, cost);
        }
        guard.listeners.decided(key, policy, cost, decided.allowed(), DecisionEvent.FALLBACK);
        return decided;
    }

    /** Decides a reservation by the failure policy: LOCAL reserves on this instance's bucket. */
    private Decision reserveWithout(Degradation degradation, boolean storeDown) {
        guard.degradations.degraded(policy, key, degradation);
        boolean allowed = switch (degradation.fallback()) {
            case ALLOW -> true;
            case DENY -> false;
            case LOCAL -> {
                // Late but not down: the store may be deciding this reservation; never contradict it.
                waitMicros = storeDown && cost <= guard.local.share(policy).maxCost()
                        ? guard.local.reserve(policy, key, cost, maxWaitMicros)
                        : -1;
                yield waitMicros >= 0;
            }
        };
        waitMicros = Math.max(0, waitMicros);
        return FallbackDecisions.degradedDecision(policy, allowed, degradation);
    }

    /**
     * Settles a request that the failure policy decided and the store decided too, later: one that the store
     * refused but the fallback admitted is charged all the same; one that the store charged but the fallback
     * refused gets its tokens back.
     */
    private void settle(Decision decidedInstead, Decision storeDecision) {
        if (decidedInstead.allowed() && !storeDecision.allowed()) {
            guard.metrics.overLimit(policy);
            guard.degradations.overLimit(policy, key);
            guard.adjustments.adjust(key, policy, cost, GuardedRateLimiter.ANY_WAIT_MICROS);
        } else if (!decidedInstead.allowed() && storeDecision.allowed()) {
            guard.metrics.refunded(policy);
            guard.adjustments.adjust(key, policy, -cost, GuardedRateLimiter.ANY_WAIT_MICROS); // lands in debt too
        }
    }
}
