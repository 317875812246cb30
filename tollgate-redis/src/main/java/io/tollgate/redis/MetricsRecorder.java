package io.tollgate.redis;

import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.Policy;
import java.util.function.Supplier;

/**
 * Where the limiter reports what it does. The default records nothing; {@link MicrometerMetrics} records to
 * a Micrometer registry. An interface of Tollgate's own, so that Micrometer stays an optional dependency.
 */
interface MetricsRecorder {

    MetricsRecorder NONE = new MetricsRecorder() {};

    /** Called once with the limiter's circuit breaker, whose state a recorder may watch. */
    default void watch(Supplier<CircuitBreaker.State> breakerState) {}

    /** Called for every decision the limiter returns, wherever it came from. */
    default void decided(Policy policy, Decision decision) {}

    /** Called when Redis answered a call, with how long it took. */
    default void answered(long micros) {}

    /** Called when a call to Redis failed or was not made, with why. */
    default void failed(Degradation.Cause cause) {}

    /** Called when the deny cache refused a request without asking Redis. */
    default void deniedFromCache(Policy policy) {}
}
