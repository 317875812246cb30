package io.tollgate.benchmarks.algorithms;

import static io.tollgate.benchmarks.algorithms.AlgorithmComparison.LIMIT;
import static io.tollgate.benchmarks.algorithms.AlgorithmComparison.WINDOW_MICROS;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The numbers behind docs/algorithms.svg, which the page's claims rest on. */
class AlgorithmComparisonTest {

    private static final long EDGE = 2 * WINDOW_MICROS;
    private final Traffic attack = Traffic.boundaryAttack(LIMIT, EDGE);

    @Test
    void aFixedWindowAdmitsTwiceItsLimitWithinOneWindowAcrossItsEdge() {
        Replay fixed = Replay.of(attack, new FixedWindow(LIMIT, WINDOW_MICROS));

        assertThat(fixed.admitted()).hasSize((int) (2 * LIMIT));
        assertThat(fixed.mostInAnyInterval(WINDOW_MICROS)).isEqualTo((int) (2 * LIMIT));
        assertThat(fixed.mostInAnyInterval(1_000_000)).isEqualTo((int) (2 * LIMIT));
    }

    @Test
    void theTokenBucketNeverAdmitsMoreThanItsCapacityPlusItsRateTimesTheTime() {
        for (Traffic traffic : AlgorithmComparison.patterns()) {
            Replay bucket = Replay.of(traffic, bucket());

            assertThat(bucket.worstExcessOverBucketBound(LIMIT, (double) LIMIT / WINDOW_MICROS))
                    .as(traffic.name())
                    .isLessThanOrEqualTo(1e-9);
        }
    }

    @Test
    void acrossTheEdgeTheTokenBucketAdmitsOneCapacityAndWhatRefilled() {
        Replay bucket = Replay.of(attack, bucket());

        // the attack lasts 0.95 s: a capacity of 10 and less than one token refilled
        assertThat(bucket.admitted()).hasSize((int) LIMIT);
        assertThat(bucket.mostInAnyInterval(WINDOW_MICROS)).isEqualTo((int) LIMIT);
    }

    @Test
    void theSlidingWindowCounterOvershootsItsLimitByItsEstimateOnly() {
        Replay sliding = Replay.of(attack, new SlidingWindowCounter(LIMIT, WINDOW_MICROS));

        assertThat(sliding.mostInAnyInterval(WINDOW_MICROS)).isBetween((int) LIMIT, (int) LIMIT + 1);
    }

    @Test
    void withEvenTrafficAtTwiceTheRateEveryAlgorithmAdmitsAboutTheRate() {
        for (List<Replay> row : AlgorithmComparison.replays()) {
            Replay steady = row.get(0);

            assertThat(steady.admitted().size()).as(steady.algorithm()).isBetween(30, 40);
        }
    }

    @Test
    void thePageShowsTheNumbersTheReplayGives() throws Exception {
        String page = Files.readString(Path.of("..", "docs", "algorithms.md"));

        assertThat(page).contains(AlgorithmComparison.table(AlgorithmComparison.replays()));
        assertThat(Path.of("..", "docs", "algorithms.svg")).exists();
    }

    private static TokenBucketAdmission bucket() {
        return new TokenBucketAdmission(LIMIT, Duration.ofNanos(WINDOW_MICROS * 1_000));
    }
}
