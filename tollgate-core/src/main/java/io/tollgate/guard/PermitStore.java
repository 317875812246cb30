package io.tollgate.guard;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.Permit;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What a backend does for the permits of concurrency limits, beside its {@link BucketStore}: takes and counts
 * slots, and keeps the ones it granted until they are given back. The {@link GuardedRateLimiter} owns
 * everything around each call, as for buckets: the time budget, the circuit breaker of the node (the bucket
 * store's {@link BucketStore#nodeOf}), the failure policy and its {@code LOCAL} share, and the metrics.
 *
 * <p>Implementations are thread-safe, and never block but in {@link #close}.
 *
 * @param <A> where a key's slots live in the store, of the same kind as its buckets' addresses
 */
public interface PermitStore<A> {

    /** Returns where the slots of {@code key} under {@code limit} live. */
    A address(String key, ConcurrencyLimit limit);

    /**
     * Takes a slot of {@code limit} at {@code address} if fewer than its maximum are held: the stage completes
     * with the permit, acquired (the store keeps the slot until the permit is given back, or its holder dies)
     * or refused, either with the count of slots held; or exceptionally, for {@link BucketStore#classify} to
     * sort. It has no timeout of its own.
     */
    CompletableFuture<Permit> acquire(A address, ConcurrencyLimit limit);

    /** Counts the slots held at {@code address}; the stage fails as {@link #acquire}'s does. */
    CompletableFuture<Integer> count(A address, ConcurrencyLimit limit);

    /** Gives back every permit still open, waiting at most {@code maxWait}; what is left runs out on its own. */
    void close(Duration maxWait);
}
