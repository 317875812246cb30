package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.Decision;
import io.tollgate.Degradation;
import io.tollgate.Limit;
import io.tollgate.Permit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** The HTTP meters, as Prometheus shows them: each says what it counts. */
class MicrometerRequestMetricsTest {

    private static final Policy POLICY = Policy.of("per-client", Limit.of(3, Rate.perHour(3)));

    @Test
    void everyMeterSaysWhatItCountsForPrometheusHelp() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerRequestMetrics metrics = MicrometerRequestMetrics.of(registry);
        Rule rule = Rule.builder(POLICY).build();
        RuleOutcome outcome = new RuleOutcome(
                rule, "ip:127.0.0.1", new Decision(true, POLICY.limits().get(0), 0, 2, 0, 0));

        metrics.decided(outcome);
        metrics.missingKey(rule);
        metrics.settled(outcome, 2, true);
        metrics.permit(rule, permit());
        metrics.listed(rule, PolicyChoice.Listing.ALLOWED);

        assertThat(registry.getMeters())
                .hasSize(5)
                .allSatisfy(meter -> assertThat(meter.getId().getDescription())
                        .as("the description of %s", meter.getId().getName())
                        .isNotBlank());
    }

    private static Permit permit() {
        ConcurrencyLimit limit = ConcurrencyLimit.of("exports", 2);
        return new Permit() {
            @Override
            public boolean acquired() {
                return true;
            }

            @Override
            public ConcurrencyLimit limit() {
                return limit;
            }

            @Override
            public int inFlight() {
                return 1;
            }

            @Override
            public Degradation degradation() {
                return null;
            }

            @Override
            public CompletionStage<Void> releaseAsync() {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void close() {}
        };
    }
}
