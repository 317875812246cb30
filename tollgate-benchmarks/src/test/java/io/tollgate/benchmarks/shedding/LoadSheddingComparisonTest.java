package io.tollgate.benchmarks.shedding;

import static io.tollgate.benchmarks.shedding.LoadSheddingComparison.DURATION_SECONDS;
import static io.tollgate.benchmarks.shedding.LoadSheddingComparison.HELD_FROM;
import static io.tollgate.benchmarks.shedding.LoadSheddingComparison.UNLOADED_TO;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.tollgate.Priority;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The numbers behind docs/load-shedding.svg, which the page's claims (and issue 34's targets) rest on. */
class LoadSheddingComparisonTest {

    private final List<SheddingReplay> replays = LoadSheddingComparison.replays();
    private final SheddingReplay without = replays.get(0);
    private final SheddingReplay guarded = replays.get(replays.size() - 1);

    @Test
    void withoutProtectionTheServiceCollapsesUnderThreeTimesItsCapacity() {
        SheddingReplay.Summary held = without.summary(HELD_FROM, DURATION_SECONDS);

        assertThat(held.goodputPerSecond()).isLessThan(0.1 * without.capacityPerSecond());
        assertThat(held.p99Nanos())
                .as("every client gives up")
                .isEqualTo(LoadSheddingComparison.TIMEOUT_MILLIS * 1_000_000);
    }

    @Test
    void withTheGuardGoodputStaysAtLeastNineTenthsOfTheCapacity() {
        SheddingReplay.Summary held = guarded.summary(HELD_FROM, DURATION_SECONDS);

        assertThat(held.goodputPerSecond()).isGreaterThanOrEqualTo(0.9 * guarded.capacityPerSecond());
        assertThat(held.timedOut()).isZero();
    }

    @Test
    void withTheGuardTheLatencyStaysWithinTwiceTheUnloadedOne() {
        long unloaded = guarded.summary(0, UNLOADED_TO).p99Nanos();

        assertThat(guarded.summary(HELD_FROM, DURATION_SECONDS).p99Nanos()).isLessThanOrEqualTo(2 * unloaded);
        assertThat(unloaded)
                .as("the same as without the guard, within a millisecond")
                .isCloseTo(without.summary(0, UNLOADED_TO).p99Nanos(), within(1_000_000L));
    }

    @Test
    void withTheGuardCriticalRequestsAreServedWhileSheddableOnesAbsorbTheShedding() {
        double[] success = guarded.summary(HELD_FROM, DURATION_SECONDS).success();

        assertThat(success[Priority.CRITICAL.ordinal()]).isGreaterThanOrEqualTo(0.99);
        assertThat(success[Priority.DEFAULT.ordinal()]).isLessThan(success[Priority.CRITICAL.ordinal()]);
        assertThat(success[Priority.SHEDDABLE.ordinal()])
                .isLessThan(success[Priority.DEFAULT.ordinal()])
                .isLessThan(0.01);
    }

    @Test
    void belowItsCapacityTheGuardShedsNothing() {
        SheddingReplay.Summary unloaded = guarded.summary(0, UNLOADED_TO);

        assertThat(unloaded.shed()).isZero();
    }

    @Test
    void besideNetflixsLimiterTheGuardServesMoreAndServesTheCriticalFirst() {
        SheddingReplay.Summary ours = guarded.summary(HELD_FROM, DURATION_SECONDS);
        for (SheddingReplay netflix : replays.subList(1, replays.size() - 1)) {
            SheddingReplay.Summary theirs = netflix.summary(HELD_FROM, DURATION_SECONDS);

            assertThat(theirs.goodputPerSecond()).as(netflix.name()).isLessThan(ours.goodputPerSecond());
            assertThat(theirs.success()[Priority.CRITICAL.ordinal()])
                    .as(netflix.name())
                    .isLessThan(0.9);
            assertThat(theirs.p99Nanos())
                    .as("it too keeps the latency: " + netflix.name())
                    .isLessThan(2 * 39_000_000L);
        }
        double[] one = replays.get(1).summary(HELD_FROM, DURATION_SECONDS).success();
        assertThat(one[Priority.CRITICAL.ordinal()])
                .as("one limiter serves every priority alike")
                .isCloseTo(one[Priority.SHEDDABLE.ordinal()], within(0.05));
    }

    @Test
    void thePageShowsTheNumbersTheReplayGives() throws Exception {
        String page = Files.readString(Path.of("..", "docs", "load-shedding.md"));
        String chart = Files.readString(Path.of("..", "docs", "load-shedding.svg"));

        // Netflix's rows move a little between runs (its probe's jitter): the deterministic rows are held exactly
        assertThat(page).contains(LoadSheddingComparison.row(without), LoadSheddingComparison.row(guarded));
        for (SheddingReplay replay : replays) {
            assertThat(page).contains("| " + replay.name() + " |");
            assertThat(chart).contains(">" + replay.name() + "<");
        }
    }
}
