package io.tollgate.guard;

import io.tollgate.BucketState;
import io.tollgate.LimiterArguments;
import io.tollgate.Policy;
import io.tollgate.Propagation;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The calls an operator makes, one at a time and waiting for the store within the time budget: what a key's
 * buckets hold, whether the store keeps them, a reset (announced to every instance sharing the store, and confirmed), and
 * the count of a key's permits. A store that cannot answer in time is an {@link IllegalStateException} saying
 * why, never a decision of the failure policy.
 *
 * <p>Thread-safe.
 */
final class OperatorCalls<A> {

    private final GuardedRateLimiter<A> guard;

    OperatorCalls(GuardedRateLimiter<A> guard) {
        this.guard = guard;
    }

    /** See {@link GuardedRateLimiter#inspect}. */
    BucketState inspect(String key, Policy policy) {
        LimiterArguments.checkRequest(key, policy, 1);
        A address = guard.store.address(key, policy);
        StoreReply reply = await(address, () -> guard.store.charge(address, policy, 0, 0, false));
        return BucketState.of(policy.limits(), reply.debtsBefore());
    }

    /** See {@link GuardedRateLimiter#holds}. */
    boolean holds(String key, Policy policy) {
        LimiterArguments.checkRequest(key, policy, 1);
        A address = guard.store.address(key, policy);
        return await(address, () -> guard.store.exists(address));
    }

    /** See {@link GuardedRateLimiter#reset}. */
    Propagation reset(String key, Policy policy) {
        LimiterArguments.checkRequest(key, policy, 1);
        A address = guard.store.address(key, policy);
        await(address, () -> guard.store.delete(address));
        guard.changesHeard.heard(policy.name(), key); // this instance's requests still on their way predate it too
        guard.forget(policy.name(), key);
        try {
            // the store takes it within the budget, and the confirmations come within their bound after that
            return await(address, () -> guard.store.announceChange(policy, key, true), BucketStore.CONFIRMED_WITHIN);
        } catch (IllegalStateException e) {
            throw new IllegalStateException(
                    "the buckets of key '" + key + "' under policy '" + policy.name() + "' were deleted, but the"
                            + " other instances could not be told (" + e.getMessage() + "); they rely on what"
                            + " they remember of it for at most "
                            + guard.settings.denyCacheMaxAge().toMillis() + " ms",
                    e);
        }
    }

    /** Runs one call for an operator within the budget; throws {@link IllegalStateException} saying why not. */
    <T> T await(A address, Supplier<CompletableFuture<T>> call) {
        return await(address, call, Duration.ZERO);
    }

    /** Runs one call for an operator within the budget and {@code more}; throws as {@link #await(Object, Supplier)}. */
    private <T> T await(A address, Supplier<CompletableFuture<T>> call, Duration more) {
        String unavailable = guard.store.unavailable();
        if (unavailable != null) {
            throw new IllegalStateException(unavailable);
        }
        try {
            return call.get().get(guard.settings.timeout().plus(more).toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + guard.store.name(), e);
        } catch (Exception e) {
            throw new IllegalStateException(guard.store.classify(e, address).detail(), e);
        }
    }
}
