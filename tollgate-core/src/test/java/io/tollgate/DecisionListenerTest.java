package io.tollgate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.fixtures.LoggedLines;
import io.tollgate.fixtures.ManualTimeSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Listeners of a limiter in memory: told of every decision and charge, in order, and never in the way. */
class DecisionListenerTest {

    private static final Policy TWO = Policy.of("two", Limit.of(2, Rate.perMinute(1)));

    @RegisterExtension
    final LoggedLines log = new LoggedLines(DecisionListener.class);

    private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder()
            .timeSource(new ManualTimeSource(1_000_000))
            .build();
    private final List<String> told = new CopyOnWriteArrayList<>();
    private final DecisionListener listener = event -> told.add(event.key() + " "
            + event.policy().name() + " " + event.cost() + " " + event.outcome() + " " + event.source());

    @Test
    void tellsEachDecisionWithItsKeyPolicyCostOutcomeAndSource() {
        limiter.onDecision(listener);

        limiter.tryAcquire("alice", TWO);
        limiter.tryAcquire("alice", TWO);
        limiter.tryAcquire("alice", TWO);

        assertThat(told)
                .containsExactly(
                        "alice two 1 ALLOWED memory", "alice two 1 ALLOWED memory", "alice two 1 REFUSED memory");
    }

    @Test
    void tellsAsynchronousDecisionsBeforeTheCallerSeesThem() {
        limiter.onDecision(listener);

        CompletionStage<Decision> allowed = limiter.tryAcquireAsync("alice", TWO, 2);
        assertThat(told).containsExactly("alice two 2 ALLOWED memory");
        limiter.tryAcquireAsync("alice", TWO, 1).toCompletableFuture().join();

        assertThat(allowed.toCompletableFuture().join().allowed()).isTrue();
        assertThat(told).containsExactly("alice two 2 ALLOWED memory", "alice two 1 REFUSED memory");
    }

    @Test
    void tellsReservationsGrantedAndRefused() throws InterruptedException {
        limiter.onDecision(listener);

        boolean granted = limiter.acquire("alice", TWO, 2, Duration.ZERO);
        boolean refused = limiter.acquire("alice", TWO, 1, Duration.ZERO);

        assertThat(granted).isTrue();
        assertThat(refused).isFalse();
        assertThat(told).containsExactly("alice two 2 ALLOWED memory", "alice two 1 REFUSED memory");
    }

    @Test
    void tellsChargesAsChargedAndNothingOfRefundsResetsOrReads() {
        limiter.onDecision(listener);

        limiter.charge("alice", TWO, 3);
        limiter.refundAsync("alice", TWO, 1);
        limiter.inspect("alice", TWO);
        limiter.reset("alice", TWO);

        assertThat(told).containsExactly("alice two 3 CHARGED memory");
    }

    @Test
    void tellsNothingOfARequestTheLimiterRejects() {
        limiter.onDecision(listener);

        assertThatThrownBy(() -> limiter.tryAcquire("", TWO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key");

        assertThat(told).isEmpty();
    }

    @Test
    void tellsListenersInTheOrderTheyWereAdded() {
        limiter.onDecision(event -> told.add("first"));
        limiter.onDecision(event -> told.add("second"));

        limiter.tryAcquire("alice", TWO);

        assertThat(told).containsExactly("first", "second");
    }

    @Test
    void stopsTellingAListenerWhoseSubscriptionIsCancelled() {
        DecisionListener.Subscription subscription = limiter.onDecision(listener);
        limiter.onDecision(event -> told.add("other"));
        limiter.tryAcquire("alice", TWO);

        subscription.cancel();
        subscription.cancel();
        limiter.tryAcquire("alice", TWO);

        assertThat(told).containsExactly("alice two 1 ALLOWED memory", "other", "other");
    }

    @Test
    void aFailingListenerChangesNoDecisionKeepsNoOtherListenerUninformedAndIsLoggedOnce() {
        limiter.onDecision(event -> {
            throw new IllegalStateException("broken on purpose");
        });
        limiter.onDecision(listener);

        Decision first = limiter.tryAcquire("alice", TWO);
        Decision second = limiter.tryAcquire("alice", TWO);
        Decision third = limiter.tryAcquire("alice", TWO);

        assertThat(List.of(first.allowed(), second.allowed(), third.allowed())).containsExactly(true, true, false);
        assertThat(told).hasSize(3);
        assertThat(log.lines()).singleElement().satisfies(line -> {
            assertThat(line.getLevel()).isEqualTo(Level.WARNING);
            assertThat(line.getMessage()).contains("a decision listener", "failed");
            assertThat(line.getThrown()).hasMessage("broken on purpose");
        });
    }

    @Test
    void marksTheWarmUpsDecisionsSoThatCountersSkipThem() {
        List<DecisionEvent> events = new CopyOnWriteArrayList<>();
        limiter.onDecision(events::add);

        limiter.warmUp(Duration.ofSeconds(30));
        limiter.tryAcquire("alice", TWO);

        assertThat(events).hasSizeGreaterThan(1);
        assertThat(events.subList(0, events.size() - 1)).allMatch(DecisionEvent::warmUp);
        assertThat(events.get(events.size() - 1).warmUp()).isFalse();
    }

    @Test
    void aLimiterOfTheApplicationsOwnTellsNoListenerAndSaysSo() {
        RateLimiter own = new RateLimiter() {
            @Override
            public Decision tryAcquire(String key, Policy policy, long cost) {
                return limiter.tryAcquire(key, policy, cost);
            }

            @Override
            public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
                return limiter.tryAcquireAsync(key, policy, cost);
            }

            @Override
            public boolean acquire(String key, Policy policy, long cost, Duration maxWait) {
                return false;
            }
        };

        assertThatThrownBy(() -> own.onDecision(listener))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("tells no decision listener");
    }

    @Test
    void anEventNamesABadValue() {
        assertThatThrownBy(() -> new DecisionEvent("alice", TWO, 0, DecisionEvent.Outcome.ALLOWED, "memory"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cost must be at least 1, was 0");
        assertThatThrownBy(() -> new DecisionEvent("alice", TWO, 1, null, "memory"))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("outcome");
    }
}
