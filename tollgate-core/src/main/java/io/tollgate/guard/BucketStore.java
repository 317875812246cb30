package io.tollgate.guard;

import io.tollgate.Policy;
import io.tollgate.Propagation;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What a backend does for the {@link GuardedRateLimiter}: applies a charge to the buckets of one key
 * atomically and reports what they held, so that the guard works out every decision with the same
 * arithmetic. The guard owns everything around it: the time budget, the circuit breakers, the failure
 * policy and its {@code LOCAL} fallback, the deny cache and the metrics.
 *
 * <p>Implementations are thread-safe, and never block in any method.
 *
 * @param <A> where a key's buckets live in the store (such as a Redis key), worked out once per request
 */
public interface BucketStore<A> {

    /** Returns the store's name for messages and log lines, such as {@code Redis}. */
    String name();

    /** Returns where the buckets of {@code key} under {@code policy} live. */
    A address(String key, Policy policy);

    /**
     * Returns the node that serves {@code address}: the guard keeps one circuit breaker per node, so that one
     * node failing degrades only the keys it serves.
     */
    String nodeOf(A address);

    /** Returns null when the store can be called now, or why it cannot, for messages. */
    String unavailable();

    /**
     * Takes {@code cost} tokens (a negative cost gives tokens back) from every limit of the buckets at
     * {@code address}, if all of them can give it within {@code maxWaitMicros}, in one atomic step; a cost
     * of 0 only reads. The stage completes with the buckets' state just before, or exceptionally, for {@link
     * #classify} to sort. It has no timeout of its own. A store that answers several requests with one reply
     * returns a {@link StoreAnswer} for each, and marks them all arrived before it completes the first.
     *
     * @param batchable whether the request may travel with others, rather than alone: an ordinary decision
     *     ({@code maxWaitMicros} 0), or a charge that takes a positive cost whatever the buckets hold ({@code
     *     maxWaitMicros} at least {@link io.tollgate.TokenBucket#MAX_TICKS})
     */
    CompletableFuture<StoreReply> charge(A address, Policy policy, long cost, long maxWaitMicros, boolean batchable);

    /** Says whether the store keeps buckets at {@code address}; the stage fails as {@link #charge}'s does. */
    CompletableFuture<Boolean> exists(A address);

    /** Deletes the buckets at {@code address}; the stage fails as {@link #charge}'s does. */
    CompletableFuture<Void> delete(A address);

    /**
     * Tells every other instance sharing the store that the buckets of {@code key} under {@code policy} changed
     * outside a request (a reset, tokens given back), so that each forgets what it remembers of them ({@link
     * GuardedRateLimiter#changedElsewhere}). With {@code confirmed}, for an operator's reset, each also confirms
     * it, and the stage completes once every other instance live at the announcement confirmed, or {@link
     * #CONFIRMED_WITHIN} after the store took it, saying which did not. Without, for tokens given back on a
     * request's path (which must not wait on the slowest instance), nobody confirms and the stage completes once
     * the store took the announcement, with {@link Propagation#none()}. It fails as {@link #charge}'s does if the
     * store could not take it. A store that no other instance shares completes it at once.
     */
    CompletableFuture<Propagation> announceChange(Policy policy, String key, boolean confirmed);

    /**
     * How long an announced change waits for the other instances to confirm: long enough for an instance on a busy
     * machine (one that confirms at all answers within milliseconds), and paid in full only while an instance that
     * stopped is still counted live.
     */
    Duration CONFIRMED_WITHIN = Duration.ofSeconds(1);

    /**
     * Sorts a failed call into what the guard does about it.
     *
     * @param address the buckets the call was for, named in the detail; null for a call about none
     */
    StoreFailure classify(Throwable failure, A address);
}
