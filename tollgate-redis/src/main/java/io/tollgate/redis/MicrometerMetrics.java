package io.tollgate.redis;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.Policy;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Records a {@link RedisRateLimiter}'s work to a Micrometer {@link MeterRegistry}:
 *
 * <ul>
 *   <li>{@code tollgate.decisions} (counter), tags {@code policy}, {@code outcome} = {@code allowed} or
 *       {@code denied}, and {@code source} = {@code redis}, {@code deny_cache} or {@code fallback} (a
 *       degraded decision made by the failure policy);
 *   <li>{@code tollgate.redis.latency} (timer, with p50, p90, p99 and p99.9), the time Redis took to answer;
 *   <li>{@code tollgate.redis.failures} (counter), tag {@code cause} = {@code timeout}, {@code
 *       unreachable}, {@code error_reply} or {@code circuit_open};
 *   <li>{@code tollgate.circuit.state} (gauge): 0 closed, 1 half-open, 2 open;
 *   <li>{@code tollgate.deny_cache.hits} (counter), tag {@code policy}.
 * </ul>
 *
 * <p>Micrometer is an optional dependency of tollgate-redis: applications that use this class add {@code
 * io.micrometer:micrometer-core} themselves. Thread-safe.
 */
public final class MicrometerMetrics implements MetricsRecorder {

    private final MeterRegistry registry;
    private final Timer latency;

    private MicrometerMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.latency = Timer.builder("tollgate.redis.latency")
                .description("Time Redis took to answer a decision")
                .publishPercentiles(0.5, 0.9, 0.99, 0.999)
                .register(registry);
    }

    /** Returns metrics that record to {@code registry}. */
    public static MicrometerMetrics of(MeterRegistry registry) {
        return new MicrometerMetrics(Objects.requireNonNull(registry, "registry"));
    }

    @Override
    public void watch(Supplier<CircuitBreaker.State> breakerState) {
        Gauge.builder(
                        "tollgate.circuit.state",
                        breakerState,
                        state -> state.get().ordinal())
                .description("Circuit breaker in front of Redis: 0 closed, 1 half-open, 2 open")
                .register(registry);
    }

    @Override
    public void decided(Policy policy, Decision decision) {
        registry.counter(
                        "tollgate.decisions",
                        "policy",
                        policy.name(),
                        "outcome",
                        decision.allowed() ? "allowed" : "denied",
                        "source",
                        decision.degraded() ? "fallback" : "redis")
                .increment();
    }

    @Override
    public void answered(long micros) {
        latency.record(micros, TimeUnit.MICROSECONDS);
    }

    @Override
    public void failed(Degradation.Cause cause) {
        registry.counter("tollgate.redis.failures", "cause", cause.name().toLowerCase(Locale.ROOT))
                .increment();
    }

    @Override
    public void deniedFromCache(Policy policy) {
        registry.counter("tollgate.deny_cache.hits", "policy", policy.name()).increment();
        Counter.builder("tollgate.decisions")
                .tags("policy", policy.name(), "outcome", "denied", "source", "deny_cache")
                .register(registry)
                .increment();
    }
}
