package io.tollgate.guard;

import io.tollgate.ConcurrencyLimit;
import io.tollgate.DecisionEvent;
import io.tollgate.DecisionListener;
import io.tollgate.Degradation;
import io.tollgate.Policy;

/**
 * Where a limiter reports what it does: {@link GuardedRateLimiter} all of it, a limiter in memory its
 * decisions, through {@link #decisions()}. The default records nothing; {@code io.tollgate.redis.MicrometerMetrics} records to a Micrometer
 * registry. An interface of Tollgate's own, so that Micrometer stays an optional dependency.
 *
 * <p>Implementations are thread-safe, and quick: they are called on the decision's path.
 */
public interface MetricsRecorder {

    MetricsRecorder NONE = new MetricsRecorder() {};

    /** Called once for each circuit breaker, with the node it guards; a recorder may watch its state. */
    default void breaker(String node, CircuitBreaker breaker) {}

    /** The source of a decision that the failure policy made because the store could not. */
    String FALLBACK = DecisionEvent.FALLBACK;

    /**
     * Called for every decision the limiter returns, and for every reservation it grants or refuses, with
     * where the decision came from: {@link #FALLBACK}, or the store's name in lower case ({@code redis},
     * {@code memory}). A refusal of the deny cache is reported by {@link #refusedFromCache} instead. Called by
     * the listener {@link #decisions()} returns.
     */
    default void decided(Policy policy, boolean allowed, String source) {}

    /**
     * Returns the listener that records a limiter's decisions here ({@link #decided}, {@link #refusedFromCache}):
     * how the metrics observe decisions, as every other observer does ({@link io.tollgate.RateLimiter#onDecision}).
     * Charges are not decisions, and are not recorded.
     */
    default DecisionListener decisions() {
        return event -> {
            switch (event.outcome()) {
                case CHARGED -> {}
                case REFUSED -> {
                    if (event.source().equals(DecisionEvent.DENY_CACHE)) {
                        refusedFromCache(event.policy());
                    } else {
                        decided(event.policy(), false, event.source());
                    }
                }
                case ALLOWED -> decided(event.policy(), true, event.source());
            }
        };
    }

    /**
     * Called for every permit of a concurrency limit the limiter returns, acquired or refused, with where it
     * came from, as for {@link #decided}.
     */
    default void permitDecided(ConcurrencyLimit limit, boolean acquired, String source) {}

    /** Called when the store answered a call (a decision or a permit), in time or late, with how long it took. */
    default void answered(long micros) {}

    /** Called when a call to the store failed or was not made, with why. */
    default void failed(Degradation.Cause cause) {}

    /** Called when the deny cache refused a request without asking the store. */
    default void refusedFromCache(Policy policy) {}

    /**
     * Called when the failure policy admitted a request whose budget ran out, and the store, answering late,
     * refused it: the request was over the limit, and is charged to the store afterwards.
     */
    default void overLimit(Policy policy) {}

    /**
     * Called when the failure policy refused a request whose budget ran out, and the store, answering late,
     * allowed and charged it: its tokens are given back.
     */
    default void refunded(Policy policy) {}

    /**
     * Called when the store took the charge of what the {@code LOCAL} failure policy admitted for one key while
     * the store could not be asked (the circuit breaker was open, or there was no connection): one call per key
     * and outage, whatever the number of requests summed in it.
     */
    default void unseenCharged(Policy policy) {}

    /**
     * Called when the {@code LOCAL} failure policy admitted a request while the store could not be asked, and
     * it could not be remembered to be charged later: as many keys as allowed were waiting already.
     */
    default void unseenDropped(Policy policy) {}
}
