package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.Degradation;
import io.tollgate.FailurePolicy;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.WarmUpKeys;
import io.tollgate.testing.RedisExtension;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;

@Isolated // it reads meters that other limiters of the JVM would add to
class MicrometerMetricsTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Policy TWO = Policy.of("two", Limit.of(2, Rate.perMinute(2)));

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private RedisRateLimiter limiter;

    @BeforeEach
    void connect() {
        redis.server().heal();
        redis.server().command("FLUSHALL");
        limiter = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .timeout(Duration.ofSeconds(2))
                .failurePolicy(FailurePolicy.ALLOW)
                .circuitBreaker(2, Duration.ofSeconds(10), Duration.ofSeconds(10))
                .metrics(MicrometerMetrics.of(registry))
                .build();
    }

    @AfterEach
    void close() {
        limiter.close();
        redis.server().heal();
    }

    @Test
    void everyMeterSaysWhatItCountsForPrometheusHelp() {
        limiter.tryAcquire("alice", TWO); // the circuit breaker's gauges and the latency
        MicrometerMetrics metrics = MicrometerMetrics.of(registry);
        metrics.decided(TWO, true, "redis");
        metrics.forgetWarmUp(); // tollgate.warm_up.decisions, counting the decision above
        metrics.decided(TWO, true, "redis");
        metrics.failed(Degradation.Cause.TIMEOUT);
        metrics.refusedFromCache(TWO);
        metrics.overLimit(TWO);
        metrics.unseenCharged(TWO);
        metrics.unseenDropped(TWO);
        metrics.refunded(TWO);

        // Not the gauges a simple registry derives from the latency histogram's buckets (synthetic): Prometheus
        // shows the histogram as one family, with the timer's description.
        assertThat(registry.getMeters())
                .filteredOn(meter -> meter.getId().syntheticAssociation() == null)
                .hasSizeGreaterThan(10)
                .allSatisfy(meter -> assertThat(meter.getId().getDescription())
                        .as("the description of %s", meter.getId().getName())
                        .isNotBlank());
    }

    @Test
    void aWarmUpForgottenLeavesOnlyItsOwnCount() {
        MicrometerMetrics metrics = MicrometerMetrics.of(registry);
        RedisRateLimiter warmed = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .metrics(metrics)
                .build();
        try {
            warmed.warmUp(Duration.ofSeconds(30));
            metrics.failed(Degradation.Cause.TIMEOUT); // as a cold warm-up's decision may
            double decided = registry.find("tollgate.decisions").counters().stream()
                    .mapToDouble(Counter::count)
                    .sum();

            metrics.forgetWarmUp();

            assertThat(registry.get("tollgate.warm_up.decisions").counter().count())
                    .isEqualTo(decided);
            assertThat(registry.getMeters())
                    .filteredOn(meter -> meter.getId().syntheticAssociation() == null) // the histogram's buckets
                    .extracting(meter -> meter.getId().getName())
                    .as("no decision, failure or refusal of the warm-up's own policies, not even at zero")
                    .containsOnly("tollgate.warm_up.decisions", "tollgate.circuit.state", "tollgate.redis.latency");
            assertThat(registry.get("tollgate.redis.latency").timer().count())
                    .as("the latency histogram is made again, and has recorded nothing")
                    .isZero();
        } finally {
            warmed.close();
        }
    }

    @Test
    void aRealPolicyPrimedByTheWarmUpFindsItsMetersReadyAtZero() {
        MicrometerMetrics metrics = MicrometerMetrics.of(registry);
        RedisRateLimiter primed = RedisRateLimiter.builder()
                .uri(redis.server().uri())
                .metrics(metrics)
                .build();
        try {
            for (int i = 0; i < 5; i++) {
                primed.tryAcquire(WarmUpKeys.key("primed"), TWO);
            }

            metrics.forgetWarmUp();

            assertThat(count("tollgate.decisions", "policy", "two", "outcome", "allowed", "source", "redis"))
                    .isZero();
            assertThat(count("tollgate.decisions", "policy", "two", "outcome", "refused", "source", "redis"))
                    .isZero();
            assertThat(registry.get("tollgate.deny_cache.hits").counter().count())
                    .isZero();
            assertThat(registry.get("tollgate.warm_up.decisions").counter().count())
                    .isEqualTo(5);

            primed.tryAcquire("alice", TWO);

            assertThat(count("tollgate.decisions", "policy", "two", "outcome", "allowed", "source", "redis"))
                    .as("the counter made again is the one counting")
                    .isEqualTo(1);
        } finally {
            primed.close();
        }
    }

    @Test
    void countsDecisionsByPolicyOutcomeAndSource() {
        for (int i = 0; i < 5; i++) {
            limiter.tryAcquire("alice", TWO);
        }
        limiter.tryAcquire("alice", TWO, 2); // a cost the deny cache has not been told about: Redis decides

        assertThat(count("tollgate.decisions", "policy", "two", "outcome", "allowed", "source", "redis"))
                .isEqualTo(2);
        assertThat(count("tollgate.decisions", "policy", "two", "outcome", "refused", "source", "redis"))
                .isEqualTo(1);
        assertThat(count("tollgate.decisions", "policy", "two", "outcome", "refused", "source", "deny_cache"))
                .as("the second admission left no token: the next three were refused without asking Redis")
                .isEqualTo(3);
        assertThat(count("tollgate.deny_cache.hits", "policy", "two")).isEqualTo(3);
    }

    @Test
    void timesRedisCallsInHistogramBucketsThatAddUpAcrossInstances() {
        limiter.tryAcquire("alice", TWO);
        limiter.tryAcquire("bob", TWO);

        HistogramSnapshot latency =
                registry.get("tollgate.redis.latency").timer().takeSnapshot();
        assertThat(latency.count()).isEqualTo(2);
        assertThat(latency.percentileValues()).as("no client-side percentiles").isEmpty();
        assertThat(latency.histogramCounts())
                .extracting(bucket -> bucket.bucket(TimeUnit.MILLISECONDS))
                .containsExactly(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 1000.0);
        assertThat(latency.histogramCounts()[latency.histogramCounts().length - 1].count())
                .as("both calls within a second")
                .isEqualTo(2);
    }

    @Test
    void countsFailuresByCauseAndShowsTheCircuitBreaker() {
        redis.server().kill();

        for (int i = 0; i < 4; i++) {
            limiter.tryAcquire("alice", TWO);
        }

        assertThat(count("tollgate.redis.failures", "cause", "unreachable")).isEqualTo(2);
        assertThat(count("tollgate.redis.failures", "cause", "circuit_open")).isEqualTo(2);
        assertThat(count("tollgate.decisions", "policy", "two", "outcome", "allowed", "source", "fallback"))
                .isEqualTo(4);
        assertThat(circuitState("open")).isEqualTo(1.0);
        assertThat(circuitState("half_open")).isEqualTo(0.0);
        assertThat(circuitState("closed")).isEqualTo(0.0);
    }

    @Test
    void theCircuitStateIsPublishedPerNodeAndStateAndSurvivesGarbageCollection() throws Exception {
        limiter.tryAcquire("alice", TWO);

        for (int i = 0; i < 3; i++) {
            System.gc();
            TimeUnit.MILLISECONDS.sleep(50);
        }

        String node = "127.0.0.1:" + redis.server().port();
        assertThat(registry.find("tollgate.circuit.state").gauges())
                .extracting(gauge ->
                        gauge.getId().getTag("node") + " " + gauge.getId().getTag("state"))
                .containsExactlyInAnyOrder(node + " closed", node + " half_open", node + " open");
        assertThat(circuitState("closed")).isEqualTo(1.0);
        assertThat(circuitState("open")).isEqualTo(0.0);
    }

    private double circuitState(String state) {
        return registry.get("tollgate.circuit.state")
                .tag("state", state)
                .gauge()
                .value();
    }

    private double count(String name, String... tags) {
        Counter counter = registry.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }
}
