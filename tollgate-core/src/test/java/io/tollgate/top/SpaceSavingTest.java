package io.tollgate.top;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.fixtures.Seeds;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Space-Saving against exact counting: on random streams (skewed, weighted) and adversarial ones (a flood of
 * distinct keys around a few heavy ones, keys taken in turn one more than the summary holds), every count is
 * within the bound the summary reports, and that bound is within what the algorithm promises.
 */
class SpaceSavingTest {

    private static final int CAPACITY = 16;

    static LongStream threeHundredCases() {
        return Seeds.of(300);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("threeHundredCases")
    void everyCountIsWithinTheBoundOfOneSummary(long seed) {
        List<Weighted> stream = stream(new SplittableRandom(seed));
        SpaceSaving summary = summarize(stream);

        assertWithinItsBound(summary, exact(stream));
        assertThat(summary.errorBound()).isLessThanOrEqualTo(summary.total() / CAPACITY);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("threeHundredCases")
    void everyCountIsWithinTheBoundOfSummariesMergedTwice(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Weighted> stream = stream(random);
        SpaceSaving window = window(stream, random);

        assertThat(window.total())
                .isEqualTo(stream.stream().mapToLong(Weighted::weight).sum());
        assertWithinItsBound(window, exact(stream));
        assertThat(window.errorBound())
                .as("three times what one summary of the whole stream promises")
                .isLessThanOrEqualTo(3 * window.total() / CAPACITY);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("threeHundredCases")
    void everyCountIsWithinTheBoundOfInstancesWindowsReadFromTheirBytesAndMerged(long seed) throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        List<Weighted> stream = stream(random);
        // Three instances share the stream; each merges its epochs into minutes and a window, writes the window,
        // and a reader merges what it reads: a third level of merging
        List<List<Weighted>> shares = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (Weighted item : stream) {
            shares.get(random.nextInt(3)).add(item);
        }
        List<SpaceSaving> read = new ArrayList<>();
        for (List<Weighted> share : shares) {
            read.add(roundTrip(window(share, random)));
        }
        SpaceSaving merged = SpaceSaving.merge(read, CAPACITY);

        assertThat(merged.total())
                .isEqualTo(stream.stream().mapToLong(Weighted::weight).sum());
        assertWithinItsBound(merged, exact(stream));
        assertThat(merged.errorBound())
                .as("four times what one summary of the whole stream promises")
                .isLessThanOrEqualTo(4 * merged.total() / CAPACITY);
    }

    @Test
    void readsBackWhatItWroteWithItsCountsErrorsAndBounds() throws Exception {
        SpaceSaving summary = summarize(stream(new SplittableRandom(7)));

        SpaceSaving read = roundTrip(summary);

        assertThat(read.top(Integer.MAX_VALUE)).isEqualTo(summary.top(Integer.MAX_VALUE));
        assertThat(read.total()).isEqualTo(summary.total());
        assertThat(read.unheldBound()).isEqualTo(summary.unheldBound());
        assertThat(read.errorBound()).isEqualTo(summary.errorBound());
    }

    @Test
    void refusesBytesThatAreNotASummary() {
        byte[] negative = {0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, 0, 0, 0};

        assertThatThrownBy(() -> SpaceSaving.read(new DataInputStream(new ByteArrayInputStream(negative))))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not a summary");
        assertThatThrownBy(() -> SpaceSaving.read(new DataInputStream(new ByteArrayInputStream(new byte[3]))))
                .isInstanceOf(IOException.class);
    }

    /** Parts of the stream as epochs, epochs merged into minutes, minutes into a window. */
    private static SpaceSaving window(List<Weighted> stream, SplittableRandom random) {
        List<SpaceSaving> minutes = new ArrayList<>();
        int at = 0;
        while (at < stream.size()) {
            List<SpaceSaving> epochs = new ArrayList<>();
            for (int epoch = 0; epoch < 6 && at < stream.size(); epoch++) {
                int end = Math.min(stream.size(), at + 1 + random.nextInt(400));
                epochs.add(summarize(stream.subList(at, end)));
                at = end;
            }
            minutes.add(SpaceSaving.merge(epochs, CAPACITY));
        }
        return SpaceSaving.merge(minutes, CAPACITY);
    }

    private static SpaceSaving roundTrip(SpaceSaving summary) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            summary.writeTo(out);
        }
        return SpaceSaving.read(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
    }

    @Test
    void aKeyHeavierThanTheBoundIsAlwaysHeld() {
        SpaceSaving summary = new SpaceSaving(CAPACITY);
        for (int i = 0; i < 100_000; i++) {
            summary.add("flood-" + i, 1);
            if (i % 10 == 0) {
                summary.add("heavy", 1);
            }
        }

        List<TopKey> top = summary.top(1);
        assertThat(top).extracting(TopKey::key).containsExactly("heavy");
        assertThat(top.get(0).guaranteed()).isLessThanOrEqualTo(10_000).isGreaterThan(0);
        assertThat(top.get(0).count()).isGreaterThanOrEqualTo(10_000);
    }

    @Test
    void holdsNoMoreKeysThanItsCapacityWhateverItSees() {
        SpaceSaving summary = new SpaceSaving(CAPACITY);
        for (int i = 0; i < 1_000_000; i++) {
            summary.add("key-" + i, 1);
        }

        assertThat(summary.top(Integer.MAX_VALUE)).hasSize(CAPACITY);
        assertThat(summary.total()).isEqualTo(1_000_000);
    }

    @Test
    void refusesAWeightThatIsNotPositive() {
        assertThatThrownBy(() -> new SpaceSaving(CAPACITY).add("k", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("weight must be positive, was 0");
    }

    /** Asserts that each held key's count is within its error of the truth, and each other key below the bound. */
    private static void assertWithinItsBound(SpaceSaving summary, Map<String, Long> exact) {
        List<TopKey> held = summary.top(Integer.MAX_VALUE);
        Map<String, TopKey> byKey = new HashMap<>();
        held.forEach(key -> byKey.put(key.key(), key));
        for (Map.Entry<String, Long> truth : exact.entrySet()) {
            TopKey estimate = byKey.get(truth.getKey());
            if (estimate == null) {
                assertThat(truth.getValue())
                        .as("%s, not held", truth.getKey())
                        .isLessThanOrEqualTo(summary.errorBound());
            } else {
                assertThat(truth.getValue())
                        .as("%s: %s", truth.getKey(), estimate)
                        .isBetween(estimate.guaranteed(), estimate.count());
                assertThat(estimate.error()).isLessThanOrEqualTo(summary.errorBound());
            }
        }
    }

    private static SpaceSaving summarize(List<Weighted> stream) {
        SpaceSaving summary = new SpaceSaving(CAPACITY);
        stream.forEach(item -> summary.add(item.key(), item.weight()));
        return summary;
    }

    private static Map<String, Long> exact(List<Weighted> stream) {
        Map<String, Long> counts = new HashMap<>();
        stream.forEach(item -> counts.merge(item.key(), item.weight(), Long::sum));
        return counts;
    }

    /** A stream of one of four shapes, chosen by the seed. */
    private static List<Weighted> stream(SplittableRandom random) {
        int length = 200 + random.nextInt(3_000);
        List<Weighted> stream = new ArrayList<>(length);
        switch (random.nextInt(4)) {
            case 0 -> { // skewed: key i with probability about 1/i, weights 1 to 5
                int distinct = 2 + random.nextInt(500);
                for (int i = 0; i < length; i++) {
                    int key = (int) Math.floor(Math.pow(distinct, random.nextDouble()));
                    stream.add(new Weighted("k" + key, 1 + random.nextInt(5)));
                }
            }
            case 1 -> { // a flood of distinct keys, with a few heavy ones among them
                for (int i = 0; i < length; i++) {
                    boolean heavy = random.nextInt(8) == 0;
                    stream.add(new Weighted(heavy ? "heavy-" + random.nextInt(3) : "flood-" + i, 1));
                }
            }
            case 2 -> { // one more key than the summary holds, in turn: every add evicts
                for (int i = 0; i < length; i++) {
                    stream.add(new Weighted("turn-" + (i % (CAPACITY + 1)), 1));
                }
            }
            default -> { // heavy keys first, then a flood that would push them out
                for (int i = 0; i < length; i++) {
                    stream.add(new Weighted(i < length / 3 ? "early-" + (i % 4) : "late-" + i, 1 + random.nextInt(3)));
                }
            }
        }
        return stream;
    }

    private record Weighted(String key, long weight) {}
}
