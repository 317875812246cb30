package io.tollgate;

import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Keeps each client inside the limits of a {@link Policy}: every call asks for {@code cost} tokens from
 * the buckets of one client key under one policy, and takes them only if every limit of the policy has
 * enough.
 *
 * <p>A key is any non-empty string that identifies a client: an IP address, an API key, a user id. Each
 * (policy name, key) pair has its own buckets; a bucket that has not been used starts full.
 *
 * <p><b>Policy changes.</b> When a policy name is used with different limits than before, each existing
 * bucket keeps the tokens it had spent, up to the new capacity (a full one stays full); limits are matched by
 * position, and a limit that is new starts full.
 *
 * <p>Implementations are thread-safe. Arguments are checked before anything else: every method throws
 * {@link IllegalArgumentException} with a message naming the bad value for an empty key, a cost below 1
 * or above the policy's {@linkplain Policy#maxCost() smallest capacity}, or a negative wait, and {@link
 * NullPointerException} for a null argument. Those are thrown directly, also by the asynchronous method.
 */
public interface RateLimiter {

    /**
     * The names of the policies that {@link #warmUp} decides start with this: {@code tollgate.warm-up} and
     * {@code tollgate.warm-up-refused}. A warm-up decides on keys that no client can guess, and leaves no trace in
     * the meters operators watch or in the log: its decisions are counted only by the meter {@code
     * tollgate.warm_up.decisions}, and never logged as degraded.
     */
    String WARM_UP_POLICY_PREFIX = "tollgate.warm-up";

    /**
     * Takes {@code cost} tokens from the buckets of {@code key} under {@code policy} if every limit has
     * enough, and says what happened. Never waits for tokens.
     *
     * @throws IllegalArgumentException if the key is empty or the cost is out of range for the policy
     * @throws NullPointerException if the key or policy is null
     */
    Decision tryAcquire(String key, Policy policy, long cost);

    /** Same as {@link #tryAcquire(String, Policy, long)} with a cost of 1. */
    default Decision tryAcquire(String key, Policy policy) {
        return tryAcquire(key, policy, 1);
    }

    /**
     * Asynchronous form of {@link #tryAcquire(String, Policy, long)}: the stage completes with the
     * decision. Backends that talk to a store do not block the calling thread.
     *
     * @throws IllegalArgumentException if the key is empty or the cost is out of range for the policy
     * @throws NullPointerException if the key or policy is null
     */
    CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost);

    /**
     * Blocks until {@code cost} tokens are taken, for a caller that throttles its own outgoing work. If
     * the tokens cannot be had within {@code maxWait}, returns {@code false} at once, without waiting in
     * vain and without taking anything.
     *
     * <p>Waiting callers reserve their tokens ahead of time (the bucket may go below zero), so they are
     * served in the order they asked. If the thread is interrupted while it waits, the reserved tokens stay
     * taken.
     *
     * @param maxWait the longest the caller is willing to wait; zero waits never
     * @return true once the tokens are taken, false if that would take longer than maxWait
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws IllegalArgumentException if the key is empty, the cost is out of range or maxWait is negative
     * @throws NullPointerException if an argument is null
     */
    boolean acquire(String key, Policy policy, long cost, Duration maxWait) throws InterruptedException;

    /**
     * Gives {@code cost} tokens back to the buckets of {@code key} under {@code policy}, each limit up to its
     * capacity: for a request that was allowed and then not carried out, such as one of several decisions of
     * which another refused. The stage completes once the buckets have them back.
     *
     * <p>Give back only what an allowed, non-{@linkplain Decision#degraded() degraded} decision took, or what
     * {@link #chargeAsync} took (a cost up to what a charge may be, beyond the capacity): a decision that the
     * failure policy made took nothing from the store. A bucket in debt gets the tokens too. If the store
     * cannot be asked, the stage fails and the tokens stay taken, as if the request had been carried out.
     *
     * @throws UnsupportedOperationException if this limiter cannot give tokens back (the default)
     * @throws IllegalArgumentException if the key is empty, or the cost is below 1 or beyond what a charge may
     *     be
     * @throws NullPointerException if the key or policy is null
     */
    default CompletionStage<Void> refundAsync(String key, Policy policy, long cost) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot give tokens back");
    }

    /**
     * Takes {@code cost} tokens from the buckets of {@code key} under {@code policy} whatever they hold,
     * deciding nothing: for a cost known only once a request has been served, such as the tokens a language
     * model used, the bytes a download sent, or a login that failed. A bucket with fewer tokens than the cost
     * goes into debt: it holds none, and requests are refused, each with the retry-after it takes the bucket
     * to refill past the debt, until it has. The stage completes with what the buckets hold after the charge.
     *
     * <p>The cost may exceed the policy's capacity: a charge of three times the capacity keeps the client out
     * for as long as three empty buckets take to fill, less what the bucket held. It must be at least 1 and
     * small enough that the debt is counted exactly (for a policy of 1 000 tokens a second, about 9 × 10^12).
     * Give a charge back with {@link #refundAsync}.
     *
     * <p>On a store that cannot be asked, the stage fails and nothing is charged, as for a refund.
     *
     * @throws UnsupportedOperationException if this limiter cannot charge (the default)
     * @throws IllegalArgumentException if the key is empty, or the cost is below 1 or beyond what the debt can
     *     count, naming the largest
     * @throws NullPointerException if an argument is null
     */
    default CompletionStage<BucketState> chargeAsync(String key, Policy policy, long cost) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot charge after the fact");
    }

    /**
     * Charges as {@link #chargeAsync} does and waits for it: at once in memory, for one store round trip
     * otherwise.
     *
     * @throws IllegalStateException if the store could not be asked, saying why; nothing was charged then
     * @throws UnsupportedOperationException if this limiter cannot charge
     * @throws IllegalArgumentException if the key is empty, or the cost is out of range
     * @throws NullPointerException if an argument is null
     */
    default BucketState charge(String key, Policy policy, long cost) {
        try {
            return chargeAsync(key, policy, cost).toCompletableFuture().join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw new IllegalStateException("the charge failed: " + e.getCause(), e.getCause());
        }
    }

    /**
     * Returns what the buckets of {@code key} under {@code policy} hold now, without taking anything or
     * changing them: each limit's whole tokens and time until full. A key without buckets is reported as its
     * new buckets would start. For operators and admin tools, not for deciding: the state may change the
     * moment after.
     *
     * @throws UnsupportedOperationException if this limiter cannot show its buckets (the default)
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    default BucketState inspect(String key, Policy policy) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot show its buckets");
    }

    /**
     * Says whether the store keeps buckets of {@code key} under {@code policy} now. It does not for a key it
     * has never seen (or one mistyped), nor once the buckets were reset or were full again long enough to be
     * forgotten ({@link #inspect} then reports them as new buckets would start, which is the same thing). For
     * operators and admin tools, so that a full bucket is not mistaken for a key that is in use.
     *
     * @throws UnsupportedOperationException if this limiter cannot say (the default)
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    default boolean holds(String key, Policy policy) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot say which keys it holds");
    }

    /**
     * Forgets the buckets of {@code key} under {@code policy}, so that its next request finds new buckets:
     * full, or with their limits' initial tokens. For operators, such as to let a client in again at once. On a
     * shared store it returns once every other live instance confirmed that it forgot what it remembered of the
     * key, or once the store's bound for that passed; the answer says which did not confirm.
     *
     * @return how far the reset reached the other instances: {@link Propagation#none()} in memory
     * @throws UnsupportedOperationException if this limiter cannot reset its buckets (the default)
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    default Propagation reset(String key, Policy policy) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot reset its buckets");
    }

    /**
     * Takes one of the slots that {@code limit} allows {@code key} at once, without waiting: the permit is
     * {@linkplain Permit#acquired() acquired} if fewer than {@link ConcurrencyLimit#maxInFlight()} permits of
     * the key are open, and refused otherwise. Close an acquired permit when the work it guards ends; until
     * then it counts against the key on every instance that shares the store. The stage completes at once in
     * memory, and within the time budget on a store, where the failure policy decides when the store cannot
     * (the permit is then {@linkplain Permit#degraded() degraded}); never exceptionally for a store fault.
     *
     * @throws UnsupportedOperationException if this limiter cannot limit requests in flight (the default)
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    default CompletionStage<Permit> tryAcquirePermitAsync(String key, ConcurrencyLimit limit) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot limit requests in flight");
    }

    /**
     * Takes a slot as {@link #tryAcquirePermitAsync} does, and waits for the answer: at once in memory, for at
     * most the time budget on a store.
     *
     * @throws UnsupportedOperationException if this limiter cannot limit requests in flight
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    default Permit tryAcquirePermit(String key, ConcurrencyLimit limit) {
        try {
            return tryAcquirePermitAsync(key, limit).toCompletableFuture().join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw new IllegalStateException("acquiring a permit failed: " + e.getCause(), e.getCause());
        }
    }

    /**
     * Returns how many permits of {@code key} under {@code limit} are open now, on every instance that shares
     * the store: for operators and tests, not for deciding.
     *
     * @throws UnsupportedOperationException if this limiter cannot limit requests in flight (the default)
     * @throws IllegalStateException if the store cannot answer within the time budget, saying why
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException if an argument is null
     */
    default int inFlight(String key, ConcurrencyLimit limit) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot limit requests in flight");
    }

    /**
     * Tells {@code listener} of every decision this limiter returns and every charge it takes from now on, on the
     * thread that completes each ({@link DecisionListener} says what a listener may do). Listeners are told in the
     * order they were added. The limiters of Tollgate tell listeners; a limiter of the application's own need not.
     *
     * @return what stops it
     * @throws UnsupportedOperationException if this limiter tells no listener (the default)
     * @throws NullPointerException if listener is null
     */
    default DecisionListener.Subscription onDecision(DecisionListener listener) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " tells no decision listener");
    }

    /**
     * Prepares this limiter for traffic, so that the first real requests do not pay for loading classes and
     * compiling code (and, for a store, for connecting): runs up to 10 000 decisions, synchronous and
     * asynchronous, allowed and refused, of policies of its own ({@code tollgate.warm-up} and {@code
     * tollgate.warm-up-refused}) on keys that no client uses, whose buckets are full again within
     * milliseconds. A server calls it before it says it is ready.
     *
     * @param maxTime the longest this may take
     * @return true once warm; false if {@code maxTime} ran out first (the limiter works all the same)
     * @throws IllegalArgumentException if maxTime is negative
     * @throws NullPointerException if maxTime is null
     */
    default boolean warmUp(Duration maxTime) {
        return WarmUpDecisions.run(this, maxTime);
    }
}
