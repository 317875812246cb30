package io.tollgate.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.guard.CircuitBreaker.State;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CircuitBreakerTest {

    private final CircuitBreaker breaker = new CircuitBreaker(3, 100_000, 800_000);

    @Test
    void staysClosedBelowTheThreshold() {
        breaker.onFailure(0);
        breaker.onFailure(0);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.tryCall(0)).isTrue();
    }

    @Test
    void opensAfterConsecutiveFailuresAndLetsNothingThroughDuringThePause() {
        failTimes(3, 1_000);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(breaker.tryCall(1_000)).isFalse();
        assertThat(breaker.tryCall(100_999)).isFalse();
    }

    @Test
    void aSuccessResetsTheCount() {
        failTimes(2, 0);
        breaker.onSuccess();
        failTimes(2, 0);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void afterThePauseLetsExactlyOneProbeThrough() {
        failTimes(3, 0);

        boolean probe = breaker.tryCall(100_000);
        boolean another = breaker.tryCall(100_001);

        assertThat(probe).isTrue();
        assertThat(another).isFalse();
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
    }

    @Test
    void aLateAnswerWhileOpenLetsTheNextCallProbeAtOnce() {
        failTimes(3, 0);

        breaker.onLateAnswer();

        assertThat(breaker.tryCall(1)).as("long before the pause is over").isTrue();
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        assertThat(breaker.tryCall(2)).as("one probe at a time").isFalse();
    }

    @Test
    void aLateAnswerForgetsTheFailuresCountedSoFar() {
        failTimes(2, 0);

        breaker.onLateAnswer();
        breaker.onFailure(0);

        assertThat(breaker.state())
                .as("the store answered between them: the failures were not consecutive")
                .isEqualTo(State.CLOSED);
    }

    @Test
    void callsLeftUnansweredOpenTheBreakerButCountAsDownOnlyOnceTheyHaveStalledLongEnough() {
        breaker.onStall(0, 500_000);
        breaker.onStall(10_000, 510_000);
        breaker.onStall(20_000, 520_000);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(breaker.down(1_999_999, 2_000_000))
                .as("unanswered for less than two seconds")
                .isFalse();
        assertThat(breaker.down(2_000_000, 2_000_000)).isTrue();
    }

    @Test
    void aFailureFromTheStoreCountsAsDownAtOnce() {
        breaker.onStall(0, 500_000);
        breaker.onStall(0, 500_000);
        breaker.onFailure(500_000);

        assertThat(breaker.down(500_000, 2_000_000)).isTrue();
    }

    @Test
    void aClosedBreakerIsNeverDown() {
        breaker.onStall(0, 500_000);

        assertThat(breaker.down(10_000_000, 2_000_000)).isFalse();
    }

    @Test
    void aLateAnswerWhileHalfOpenClosesTheBreaker() {
        failTimes(3, 0);
        assertThat(breaker.tryCall(100_000)).as("the probe, after the pause").isTrue();

        breaker.onLateAnswer();

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.tryCall(100_001)).isTrue();
    }

    @Test
    void aSuccessfulProbeClosesTheBreaker() {
        failTimes(3, 0);
        breaker.tryCall(100_000);

        breaker.onSuccess();

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.tryCall(100_001)).isTrue();
    }

    @Test
    void aFailedProbeOpensItAgainForTwiceAsLongUpToTheLongestPause() {
        failTimes(3, 0);
        List<Long> pauses = new ArrayList<>();
        long now = 0;
        long openedAt = 0;

        for (int i = 0; i < 5; i++) {
            while (!breaker.tryCall(now)) {
                now += 1_000;
            }
            pauses.add(now - openedAt); // the probe went through at the end of the pause
            breaker.onFailure(now); // and failed
            openedAt = now;
        }

        assertThat(pauses).containsExactly(100_000L, 200_000L, 400_000L, 800_000L, 800_000L);
    }

    @Test
    void aFailureReportedWhileOpenDoesNotExtendThePause() {
        failTimes(3, 0);

        breaker.onFailure(50_000);

        assertThat(breaker.tryCall(100_000)).isTrue();
    }

    private void failTimes(int times, long now) {
        for (int i = 0; i < times; i++) {
            breaker.onFailure(now);
        }
    }
}
