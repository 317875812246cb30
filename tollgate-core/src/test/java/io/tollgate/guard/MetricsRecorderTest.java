package io.tollgate.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.DecisionEvent;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The metrics observe decisions as every other observer does: through the listener of their recorder. */
class MetricsRecorderTest {

    private static final Policy TWO = Policy.of("two", Limit.of(2, Rate.perMinute(1)));

    private final List<String> recorded = new CopyOnWriteArrayList<>();
    private final MetricsRecorder recorder = new MetricsRecorder() {
        @Override
        public void decided(Policy policy, boolean allowed, String source) {
            recorded.add(policy.name() + " " + (allowed ? "allowed" : "refused") + " " + source);
        }

        @Override
        public void refusedFromCache(Policy policy) {
            recorded.add(policy.name() + " refused from the deny cache");
        }
    };

    @Test
    void recordsEachDecisionOfALimiterInMemoryWithItsOutcomeAndSource() {
        InMemoryRateLimiter memory = InMemoryRateLimiter.builder()
                .timeSource(new ManualTimeSource(1_000_000))
                .build();
        memory.onDecision(recorder.decisions());

        memory.tryAcquire("alice", TWO);
        memory.tryAcquireAsync("alice", TWO, 1).toCompletableFuture().join();
        memory.tryAcquire("alice", TWO);

        assertThat(recorded).containsExactly("two allowed memory", "two allowed memory", "two refused memory");
    }

    @Test
    void recordsARefusalOfTheDenyCacheAsSuchAndNoCharge() {
        var decisions = recorder.decisions();

        decisions.onDecision(new DecisionEvent("alice", TWO, 1, DecisionEvent.Outcome.REFUSED, "deny_cache"));
        decisions.onDecision(new DecisionEvent("alice", TWO, 1, DecisionEvent.Outcome.REFUSED, "fallback"));
        decisions.onDecision(new DecisionEvent("alice", TWO, 5, DecisionEvent.Outcome.CHARGED, "redis"));

        assertThat(recorded).containsExactly("two refused from the deny cache", "two refused fallback");
    }
}
