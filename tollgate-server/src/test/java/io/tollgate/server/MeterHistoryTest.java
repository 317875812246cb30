package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What the management page charts: rates per policy and Redis's latency, sampled from the meters. */
class MeterHistoryTest {

    private final MeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final MeterHistory history = MeterHistory.manual(registry);

    @Test
    void turnsTheDecisionCountersIntoAllowedRefusedAndDegradedPerSecondPerPolicy() throws Exception {
        history.sample();
        decisions("per-client", "allowed", "redis", 40);
        decisions("per-client", "refused", "deny_cache", 10);
        decisions("per-client", "refused", "fallback", 4);
        decisions("per-client", "allowed", "fallback", 6);
        decisions("tollgate.warm-up.a", "allowed", "redis", 1_000);
        Thread.sleep(1_000);
        history.sample();

        MeterHistory.Rates rates = history.rates();

        assertThat(rates.policies()).containsOnlyKeys("per-client");
        double[][] perClient = rates.policies().get("per-client");
        double seconds = 46.0 / perClient[0][0]; // the time between the samples, measured by the history itself
        assertThat(seconds).isBetween(0.9, 5.0);
        assertThat(perClient[1][0] * seconds).isCloseTo(14, within(0.01));
        assertThat(perClient[2][0] * seconds).as("made by the failure policy").isCloseTo(10, within(0.01));
    }

    @Test
    void aPolicyFirstSeenLaterCountsFromZeroAndACounterStartedOverIsNeverANegativeRate() {
        history.sample();
        history.sample();
        decisions("new", "allowed", "memory", 5);
        history.sample();
        registry.remove(registry.find("tollgate.decisions").counter());
        decisions("new", "allowed", "memory", 1);
        history.sample();

        double[] allowed = history.rates().policies().get("new")[0];

        assertThat(allowed).hasSize(3);
        assertThat(allowed[0]).as("before it had a meter").isZero();
        assertThat(allowed[1]).as("its first 5, counted from zero").isPositive();
        assertThat(allowed[2]).as("removed and registered again").isZero();
    }

    @Test
    void keepsFifteenMinutesOfSamplesAndNoMore() {
        for (int i = 0; i < MeterHistory.SAMPLES + 20; i++) {
            decisions("p", "allowed", "memory", 1);
            history.sample();
        }

        assertThat(history.rates().policies().get("p")[0]).hasSize(MeterHistory.SAMPLES - 1);
        assertThat(MeterHistory.SAMPLES - 1)
                .isEqualTo(Duration.ofMinutes(15).toSeconds() / MeterHistory.INTERVAL.toSeconds());
    }

    @Test
    void readsTheLatencyQuantilesOfTheLastMinuteFromTheHistogramAsPrometheusWould() {
        Timer timer = Timer.builder("tollgate.redis.latency")
                .serviceLevelObjectives(Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(4))
                .register(registry);
        timer.record(50, TimeUnit.MILLISECONDS); // before the window: not counted
        history.sample();
        for (int i = 0; i < 100; i++) {
            timer.record(i < 90 ? 500 : 1_500, TimeUnit.MICROSECONDS);
        }
        history.sample();

        MeterHistory.Latency latency = history.latency();

        assertThat(latency.calls()).isEqualTo(100);
        // 90 of 100 in (0, 1 ms], 10 in (1, 2 ms]: the median is 50/90 of the first bucket
        assertThat(latency.quantiles().get("p50")).isCloseTo(0.001 * 50 / 90, within(1e-9));
        assertThat(latency.quantiles().get("p99")).isCloseTo(0.001 + 0.001 * 9 / 10, within(1e-9));
    }

    @Test
    void aQuantileAboveTheLastBucketIsThatBucketsBound() {
        Timer timer = Timer.builder("tollgate.redis.latency")
                .serviceLevelObjectives(Duration.ofMillis(1), Duration.ofMillis(2))
                .register(registry);
        history.sample();
        timer.record(10, TimeUnit.SECONDS);
        history.sample();

        assertThat(history.latency().quantiles().get("p50")).isEqualTo(0.002);
    }

    @Test
    void hasNoLatencyBeforeRedisAnswersAndReadsEachNodesCircuit() {
        history.sample();

        assertThat(history.latency()).isNull();
        assertThat(history.circuits()).isEmpty();
    }

    private void decisions(String policy, String outcome, String source, int count) {
        Counter.builder("tollgate.decisions")
                .tags("policy", policy, "outcome", outcome, "source", source)
                .register(registry)
                .increment(count);
    }
}
