package io.tollgate;

/**
 * Told of every decision a limiter returns and every charge it takes ({@link DecisionEvent}): the one way that
 * metrics and the counts of who is limited observe a limiter's decisions, whatever surface asked it. Added with
 * {@link RateLimiter#onDecision}. Permits of concurrency limits are not decisions on tokens, and are not told.
 *
 * <p>Called on the thread that completes the decision (the caller's for a limiter in memory; a store's I/O
 * thread for an asynchronous decision on a store), after the decision is made and before the caller sees it; for
 * a decision the failure policy made, once, not again when the store's late answer settles it. Implementations
 * are thread-safe and quick (they sit on every request's path) and never block. An exception a listener throws
 * is logged (once per listener) and does not change the decision or keep the other listeners from being told.
 */
@FunctionalInterface
public interface DecisionListener {

    /** Takes note of one decision or charge. */
    void onDecision(DecisionEvent event);

    /**
     * What {@link RateLimiter#onDecision} returns: cancelling it stops the listener being told of decisions.
     * Thread-safe; cancelling twice does nothing more.
     */
    @FunctionalInterface
    interface Subscription extends AutoCloseable {

        /** Stops telling the listener of decisions; decisions already being reported may still reach it. */
        void cancel();

        /** Same as {@link #cancel()}. */
        @Override
        default void close() {
            cancel();
        }
    }
}
