package io.tollgate.guard;

import io.tollgate.Degradation;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import java.lang.System.Logger.Level;
import java.util.concurrent.CompletableFuture;

/**
 * Charges and refunds that must land whatever the buckets hold, without a budget: a cost known after the
 * fact, tokens given back, the settling of a late answer, and what {@code LOCAL} admitted while the store
 * could not be asked ({@link UnseenCharges}). What this instance knows of the buckets follows each answer;
 * tokens given back are announced to the other instances sharing the store.
 *
 * <p>Thread-safe.
 */
final class StoreAdjustments<A> {

    private final GuardedRateLimiter<A> guard;

    StoreAdjustments(GuardedRateLimiter<A> guard) {
        this.guard = guard;
    }

    /**
     * Charges {@code cost} to the key's buckets whatever they hold (a request that the failure policy
     * admitted), or gives {@code -cost} back (one that it refused), without a budget; the answer updates
     * what this instance knows. Tokens given back are announced to the other instances ({@link
     * BucketStore#announceChange}) before the stage completes. The stage fails if the store could not be asked.
     */
    CompletableFuture<StoreReply> adjust(String key, Policy policy, long cost, long maxWaitMicros) {
        CompletableFuture<StoreReply> adjusted = applyAdjustment(key, policy, cost, maxWaitMicros);
        if (cost >= 0) {
            return adjusted;
        }
        return adjusted.thenCompose(reply -> announceQuietly(policy, key).thenApply(announced -> reply));
    }

    /**
     * Gives {@code tokens} that a lease held back to the key's buckets, without a budget and without telling the
     * other instances: nothing they remember was wrong, the tokens were only out of reach. The stage completes
     * once the store took them, or failed to (logged).
     */
    CompletableFuture<Void> giveBack(String key, Policy policy, long tokens) {
        return applyAdjustment(key, policy, -tokens, GuardedRateLimiter.ANY_WAIT_MICROS)
                .handle((reply, failure) -> null);
    }

    /** Announces a change of the key; the stage completes either way, a failure logged. */
    private CompletableFuture<Void> announceQuietly(Policy policy, String key) {
        CompletableFuture<Propagation> announced;
        try {
            announced = guard.store.announceChange(policy, key, false); // on a request's path: no waiting
        } catch (RuntimeException e) {
            announced = CompletableFuture.failedFuture(e);
        }
        return announced.handle((done, failure) -> {
            if (failure != null) {
                guard.settings
                        .log()
                        .log(
                                Level.DEBUG,
                                () -> "Tollgate: announcing tokens given back to key '" + key + "' failed; the other"
                                        + " instances rely on what they remember of it for at most "
                                        + guard.settings.denyCacheMaxAge().toMillis() + " ms",
                                failure);
            }
            return null;
        });
    }

    private CompletableFuture<StoreReply> applyAdjustment(String key, Policy policy, long cost, long maxWaitMicros) {
        String unavailable = guard.store.unavailable();
        if (unavailable != null) {
            return CompletableFuture.failedFuture(new IllegalStateException(unavailable));
        }
        long sent = guard.time.nowMicros();
        CompletableFuture<StoreReply> reply;
        try {
            reply = guard.store.charge(guard.store.address(key, policy), policy, cost, maxWaitMicros, true);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.whenComplete((answer, failure) -> {
            if (failure != null) {
                guard.settings
                        .log()
                        .log(Level.DEBUG, () -> "Tollgate: charging or refunding key '" + key + "' failed", failure);
                return;
            }
            if (guard.changesHeard.heardSince(policy.name(), key, sent)) {
                return; // the store may have applied this before the change another instance announced
            }
            guard.local.learn(
                    policy,
                    key,
                    answer.debtsAfterCharge(policy, cost, maxWaitMicros),
                    answer.nowMicros(),
                    sent,
                    guard.time.nowMicros());
            if (guard.denyCache != null) {
                guard.denyCache.bucketChanged(policy, key, sent);
            }
        });
    }

    /**
     * Charges to the store what {@code LOCAL} admitted for a key while the store could not be asked; if it
     * cannot be reached for this either, notes it again.
     */
    private CompletableFuture<StoreReply> chargeUnseen(String key, Policy policy, long cost) {
        return adjust(key, policy, cost, GuardedRateLimiter.ANY_WAIT_MICROS).whenComplete((charged, failure) -> {
            if (failure == null) {
                guard.metrics.unseenCharged(policy);
            } else if (guard.store.classify(failure, null).cause() == Degradation.Cause.UNREACHABLE) {
                noteUnseen(policy, key, cost);
            }
        });
    }

    /** Notes an admission the store never saw, to be charged once it answers; counts it if there is no room. */
    void noteUnseen(Policy policy, String key, long cost) {
        if (!guard.unseen.add(policy, key, cost)) {
            guard.metrics.unseenDropped(policy);
            guard.degradations.unremembered(policy, key);
        }
    }

    /**
     * Sends, in the background, what {@code LOCAL} admitted while the store could not be asked: called once
     * the store has answered a decision, never ahead of one.
     */
    void storeAnswered() {
        guard.unseen.drain(this::chargeUnseen);
    }
}
