package io.tollgate.internal.guard;

import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.Policy;

/**
 * Where the limiter reports what it does. The default records nothing; {@code io.tollgate.redis.MicrometerMetrics} records to
 * a Micrometer registry. An interface of Tollgate's own, so that Micrometer stays an optional dependency.
 */
public interface MetricsRecorder {

    MetricsRecorder NONE = new MetricsRecorder() {};

    /** Called once for each circuit breaker, with the node it guards; a recorder may watch its state. */
    default void breaker(String node, CircuitBreaker breaker) {}

    /** Called for every decision the limiter returns, wherever it came from. */
    default void decided(Policy policy, Decision decision) {}

    /** Called when the store answered a call, in time or late, with how long it took. */
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
}
