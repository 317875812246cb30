package io.tollgate.guard;

import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;

/**
 * Decisions the failure policy makes when the store cannot: {@code ALLOW} and {@code DENY} without any bucket,
 * {@code LOCAL} on this instance's share of the bucket it last learnt from the store, or, while the store is
 * late but not down, refusing what the store may be deciding. Each is logged ({@link DegradationLog}).
 *
 * <p>Thread-safe.
 */
final class FallbackDecisions {

    private final GuardSettings settings;
    private final LocalBuckets local;
    private final DegradationLog degradations;
    private final String storeName;

    FallbackDecisions(GuardSettings settings, LocalBuckets local, DegradationLog degradations, String storeName) {
        this.settings = settings;
        this.local = local;
        this.degradations = degradations;
        this.storeName = storeName;
    }

    /** Returns the degradation of a decision of {@code policy} that the store could not make. */
    Degradation degradation(Policy policy, Degradation.Cause cause, String detail) {
        return new Degradation(cause, settings.failurePolicy(policy.name()), detail);
    }

    /** Decides by the failure policy, without the store: {@code LOCAL} on this instance's bucket of the key. */
    Decision decide(boolean storeDown, String key, Policy policy, long cost, Degradation degradation) {
        Decision decided = switch (degradation.fallback()) {
            case ALLOW -> degradedDecision(policy, true, degradation);
            case DENY -> degradedDecision(policy, false, degradation);
            case LOCAL -> {
                if (!storeDown) {
                    yield whileLate(policy, key, cost, degradation);
                }
                yield cost <= local.share(policy).maxCost()
                        ? local.tryAcquire(policy, key, cost).degradedBy(degradation)
                        : degradedDecision(policy, false, degradation);
            }
        };
        degradations.degraded(policy, key, decided.degradation()); // as decided: LOCAL may refuse as DENY does
        return decided;
    }

    /**
     * {@code LOCAL}'s decision on a request while the store is late but not down (see {@link GuardedRateLimiter#DOWN_AFTER_MICROS}):
     * the store may be deciding this very request, and admitting it here could contradict that decision, so it is
     * refused. A key this instance knows to be empty is refused as its bucket says (the client is over its
     * limit); any other is refused as {@code DENY} refuses, the limiter not having decided. If the store's late
     * answer allows the request, its tokens are given back.
     */
    Decision whileLate(Policy policy, String key, long cost, Degradation degradation) {
        Decision known = local.knownRefusal(policy, key, cost);
        if (known != null) {
            return known.degradedBy(degradation);
        }
        return degradedDecision(
                policy,
                false,
                new Degradation(
                        degradation.cause(), // late, or a circuit open on calls left unanswered
                        FailurePolicy.DENY,
                        degradation.detail() + "; while " + storeName + " is late but not down, LOCAL refuses"
                                + " what " + storeName + " may be deciding"));
    }

    /** A decision made without any bucket: the first limit, as if full (allowed) or empty (refused). */
    static Decision degradedDecision(Policy policy, boolean allowed, Degradation degradation) {
        Limit limit = policy.limits().get(0);
        return new Decision(
                allowed,
                limit,
                0,
                allowed ? limit.capacity() : 0,
                allowed ? 0 : GuardedRateLimiter.DEGRADED_RETRY_MICROS,
                0,
                degradation);
    }
}
