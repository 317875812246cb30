package io.tollgate.redis;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Degradation;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.guard.CircuitBreaker;
import io.tollgate.guard.MetricsRecorder;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.DoubleStream;

/**
 * Records a {@link RedisRateLimiter}'s work to a Micrometer {@link MeterRegistry}, and the decisions of the
 * in-memory limiter where the server and the Spring Boot starter keep buckets in memory. Every outcome is named
 * {@code allowed} or {@code refused}, as in Tollgate's other metrics, and every meter can be summed across
 * instances:
 *
 * <ul>
 *   <li>{@code tollgate.decisions} (counter), tags {@code policy}, {@code outcome} = {@code allowed} or
 *       {@code refused}, and {@code source} = {@code redis}, {@code memory}, {@code lease} (a hot key's
 *       admission answered from tokens taken ahead), {@code deny_cache} or {@code fallback} (a degraded decision
 *       made by the failure policy);
 *   <li>{@code tollgate.redis.latency} (timer, as a histogram with buckets from 0.1 ms to 1 s), the time
 *       Redis took to answer, late answers included;
 *   <li>{@code tollgate.redis.failures} (counter), tag {@code cause} = {@code timeout}, {@code
 *       unreachable}, {@code error_reply} or {@code circuit_open};
 *   <li>{@code tollgate.circuit.state} (gauge), tags {@code node} (the Redis node, {@code host:port}) and
 *       {@code state} = {@code closed}, {@code half_open} or {@code open}: 1 for the breaker's state, 0 for
 *       the others, one series per state as Resilience4j publishes them;
 *   <li>{@code tollgate.deny_cache.hits} (counter), tag {@code policy}: requests the deny cache refused;
 *   <li>{@code tollgate.fallback.over_limit} (counter), tag {@code policy}: requests that the failure policy
 *       admitted while Redis was late, and that its late answer showed to be over the limit (each is then
 *       charged to Redis): what a slow Redis cost in accuracy;
 *   <li>{@code tollgate.fallback.refunded} (counter), tag {@code policy}: requests that the failure policy
 *       refused while Redis was late, and that its late answer allowed and charged (their tokens are given
 *       back);
 *   <li>{@code tollgate.fallback.unseen} (counter), tags {@code policy} and {@code outcome} = {@code charged}
 *       (what the {@code LOCAL} failure policy admitted for one key while Redis could not be asked, summed,
 *       reached Redis once it answered again: one per key and outage) or {@code dropped} (an admission that
 *       could not be remembered, as 100 000 keys were waiting already: Redis is never charged for it);
 *   <li>{@code tollgate.warm_up.decisions} (counter, no tags): the decisions of warm-ups, once {@link
 *       #forgetWarmUp} has taken them out of the other meters.
 * </ul>
 *
 * <p>Micrometer is an optional dependency of tollgate-redis: applications that use this class add {@code
 * io.micrometer:micrometer-core} themselves. Thread-safe.
 */
public final class MicrometerMetrics implements MetricsRecorder {

    /** The latency histogram's buckets, in milliseconds. */
    private static final Duration[] LATENCY_BUCKETS = DoubleStream.of(
                    0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 1_000)
            .mapToObj(millis -> Duration.ofNanos((long) (millis * 1_000_000)))
            .toArray(Duration[]::new);

    private final MeterRegistry registry;
    /**
     * The decision counters by source and policy name, refused then allowed: a registry's own lookup builds
     * and sorts the meter's tags on every call, which the decision path would pay for each request.
     */
    private final Map<String, Map<String, Counter[]>> decisions = new ConcurrentHashMap<>();
    /** The deny cache's refusals by policy name: a flood is answered from the cache, a counter per refusal. */
    private final Map<String, Counter> denyCacheHits = new ConcurrentHashMap<>();
    /** Registered on the first answer, so that an in-memory limiter publishes no Redis latency. */
    private volatile Timer latency;

    private MicrometerMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Returns metrics that record to {@code registry}. */
    public static MicrometerMetrics of(MeterRegistry registry) {
        return new MicrometerMetrics(Objects.requireNonNull(registry, "registry"));
    }

    @Override
    public void breaker(String node, CircuitBreaker breaker) {
        for (CircuitBreaker.State state : CircuitBreaker.State.values()) {
            // Strongly referenced: a gauge holds its object weakly, and the breaker's only other holder is
            // the limiter, which a registry must not outlive unnoticed (the gauge would read NaN).
            Gauge.builder("tollgate.circuit.state", breaker, watched -> watched.state() == state ? 1 : 0)
                    .description("Circuit breaker in front of a Redis node: 1 for its state, 0 for the others")
                    .tags("node", node, "state", state.name().toLowerCase(Locale.ROOT))
                    .strongReference(true)
                    .register(registry);
        }
    }

    @Override
    public void decided(Policy policy, boolean allowed, String source) {
        decisionCounters(policy, source)[allowed ? 1 : 0].increment();
    }

    /** The decision counters of a policy and source, refused then allowed, registered on first use. */
    private Counter[] decisionCounters(Policy policy, String source) {
        return decisions.computeIfAbsent(source, s -> new ConcurrentHashMap<>()).computeIfAbsent(policy.name(), name ->
                new Counter[] {decisionCounter(name, "refused", source), decisionCounter(name, "allowed", source)});
    }

    /**
     * Forgets what a warm-up ({@link RateLimiter#warmUp} and the warm-ups above it) recorded, so that the meters
     * of a server or an application that says it is ready start from nothing: removes from the registry every
     * meter this has recorded to, and registers again at zero those of real policies (the server primes the
     * policies of its Envoy files) and the latency histogram, so that the first real decisions find them made
     * rather than make them on Redis's I/O thread; the warm-up's own policies ({@code tollgate.warm-up*}) leave
     * no series at all. The decisions forgotten are added to {@code tollgate.warm_up.decisions}, the one meter
     * that says a warm-up ran. The recording paths stay the same for the warm-up and for real traffic, so that
     * what the warm-up compiled is what real traffic runs. Decisions recorded while this runs may be lost: call
     * it before the instance says it is ready.
     */
    public void forgetWarmUp() {
        double forgotten = 0;
        for (Map.Entry<String, Map<String, Counter[]>> bySource : decisions.entrySet()) {
            String source = bySource.getKey();
            for (Map.Entry<String, Counter[]> byPolicy : bySource.getValue().entrySet()) {
                for (Counter counter : byPolicy.getValue()) {
                    forgotten += counter.count();
                    registry.remove(counter);
                }
                String policy = byPolicy.getKey();
                if (policy.startsWith(RateLimiter.WARM_UP_POLICY_PREFIX)) {
                    bySource.getValue().remove(policy);
                } else {
                    byPolicy.setValue(new Counter[] {
                        decisionCounter(policy, "refused", source), decisionCounter(policy, "allowed", source)
                    });
                }
            }
        }
        for (Map.Entry<String, Counter> byPolicy : denyCacheHits.entrySet()) {
            registry.remove(byPolicy.getValue());
            if (byPolicy.getKey().startsWith(RateLimiter.WARM_UP_POLICY_PREFIX)) {
                denyCacheHits.remove(byPolicy.getKey());
            } else {
                byPolicy.setValue(denyCacheCounter(byPolicy.getKey()));
            }
        }
        Timer timer = latency;
        if (timer != null) {
            registry.remove(timer);
            latency = null;
            latency();
        }
        for (String name : List.of(
                "tollgate.redis.failures",
                "tollgate.fallback.over_limit",
                "tollgate.fallback.refunded",
                "tollgate.fallback.unseen")) {
            registry.find(name).meters().forEach(registry::remove);
        }
        if (forgotten > 0) {
            Counter.builder("tollgate.warm_up.decisions")
                    .description("Decisions of the warm-up before the application or server said it was ready;"
                            + " counted in no other meter")
                    .register(registry)
                    .increment(forgotten);
        }
    }

    private Counter decisionCounter(String policy, String outcome, String source) {
        return Counter.builder("tollgate.decisions")
                .description(
                        "Decisions made, by policy, outcome and what made them: redis (or memory), lease (a hot"
                                + " key's tokens taken ahead), deny_cache (a refusal remembered) or fallback (the failure policy)")
                .tags("policy", policy, "outcome", outcome, "source", source)
                .register(registry);
    }

    @Override
    public void permitDecided(ConcurrencyLimit limit, boolean acquired, String source) {
        Counter.builder("tollgate.permits")
                .description("Permits of concurrency limits returned, by limit, outcome (acquired or refused) and"
                        + " what made them: redis, or fallback (the failure policy)")
                .tags("limit", limit.name(), "outcome", acquired ? "acquired" : "refused", "source", source)
                .register(registry)
                .increment();
    }

    @Override
    public void answered(long micros) {
        latency().record(micros, TimeUnit.MICROSECONDS);
    }

    private Timer latency() {
        Timer timer = latency;
        if (timer == null) {
            // Registering twice returns the same timer: a race here costs a lookup, not a second meter.
            timer = Timer.builder("tollgate.redis.latency")
                    .description("Time Redis took to answer a call (a decision or a permit), late answers included")
                    .serviceLevelObjectives(LATENCY_BUCKETS)
                    .register(registry);
            latency = timer;
        }
        return timer;
    }

    @Override
    public void failed(Degradation.Cause cause) {
        Counter.builder("tollgate.redis.failures")
                .description("Decisions and permits Redis did not make, by cause: timeout, unreachable, error_reply"
                        + " or circuit_open")
                .tag("cause", cause.name().toLowerCase(Locale.ROOT))
                .register(registry)
                .increment();
    }

    @Override
    public void refusedFromCache(Policy policy) {
        denyCacheHits(policy).increment();
        decided(policy, false, "deny_cache");
    }

    private Counter denyCacheHits(Policy policy) {
        return denyCacheHits.computeIfAbsent(policy.name(), this::denyCacheCounter);
    }

    private Counter denyCacheCounter(String policy) {
        return Counter.builder("tollgate.deny_cache.hits")
                .description("Requests refused from a refusal this instance remembered, without asking Redis")
                .tag("policy", policy)
                .register(registry);
    }

    @Override
    public void overLimit(Policy policy) {
        Counter.builder("tollgate.fallback.over_limit")
                .description("Requests the failure policy admitted while Redis was late, over the limit by its answer")
                .tag("policy", policy.name())
                .register(registry)
                .increment();
    }

    @Override
    public void unseenCharged(Policy policy) {
        unseen(policy, "charged");
    }

    @Override
    public void unseenDropped(Policy policy) {
        unseen(policy, "dropped");
    }

    private void unseen(Policy policy, String outcome) {
        Counter.builder("tollgate.fallback.unseen")
                .description("What the LOCAL failure policy admitted while Redis could not be asked: charged to"
                        + " Redis once it answered (one per key), or dropped for want of room")
                .tag("policy", policy.name())
                .tag("outcome", outcome)
                .register(registry)
                .increment();
    }

    @Override
    public void refunded(Policy policy) {
        Counter.builder("tollgate.fallback.refunded")
                .description("Requests the failure policy refused while Redis was late, allowed by its answer")
                .tag("policy", policy.name())
                .register(registry)
                .increment();
    }
}
