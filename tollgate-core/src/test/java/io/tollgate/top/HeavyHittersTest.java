package io.tollgate.top;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.tollgate.TimeSource;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.top.HeavyHitters.Measure;
import io.tollgate.top.HeavyHitters.Report;
import io.tollgate.top.HeavyHitters.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class HeavyHittersTest {

    private final ManualTimeSource clock = new ManualTimeSource();
    private final HeavyHitters top = new HeavyHitters(clock, 16);

    @Test
    void listsTheKeysRefusedMostHeaviestFirst() {
        refuse("per-ip", "ip:10.0.0.1", 30);
        refuse("per-ip", "ip:10.0.0.2", 10);
        refuse("per-ip", "ip:10.0.0.3", 20);

        Report report = top.top("per-ip", Measure.REFUSED, Window.ONE_MINUTE, 2);

        assertThat(report.keys()).extracting(TopKey::key).containsExactly("ip:10.0.0.1", "ip:10.0.0.3");
        assertThat(report.keys()).extracting(TopKey::count).containsExactly(30L, 20L);
        assertThat(report.total()).isEqualTo(60);
        assertThat(report.errorBound()).isZero();
    }

    @Test
    void chargesCountTokensAndEachPolicyApart() {
        top.charged("per-user", "user:ann", 5);
        top.charged("per-user", "user:bob", 1);
        top.charged("per-ip", "ip:10.0.0.1", 7);
        top.charged("per-user", "user:ann", 0); // nothing charged, nothing counted

        assertThat(top.top("per-user", Measure.CHARGED, Window.ONE_MINUTE, 10).keys())
                .containsExactly(new TopKey("user:ann", 5, 0), new TopKey("user:bob", 1, 0));
        assertThat(top.top("per-user", Measure.REFUSED, Window.ONE_MINUTE, 10).keys())
                .isEmpty();
        assertThat(top.policies()).containsExactly("per-ip", "per-user");
    }

    @Test
    void theLastMinuteForgetsWhatIsOlderAndTheLastFifteenKeepsIt() {
        refuse("p", "old", 50);
        clock.advance(Duration.ofSeconds(75));
        refuse("p", "new", 5);

        assertThat(top.top("p", Measure.REFUSED, Window.ONE_MINUTE, 10).keys())
                .extracting(TopKey::key)
                .containsExactly("new");
        assertThat(top.top("p", Measure.REFUSED, Window.FIFTEEN_MINUTES, 10).keys())
                .extracting(TopKey::key, TopKey::count)
                .containsExactly(tuple("old", 50L), tuple("new", 5L));
    }

    @Test
    void theLastMinuteCoversSixtyToSeventySeconds() {
        clock.advanceMicros(
                RecentTraffic.EPOCH_MICROS - clock.nowMicros() % RecentTraffic.EPOCH_MICROS); // an epoch begins
        refuse("p", "at-the-start", 1);
        clock.advance(Duration.ofSeconds(69));
        assertThat(keys(Window.ONE_MINUTE)).containsExactly("at-the-start");

        clock.advance(Duration.ofSeconds(1));
        assertThat(keys(Window.ONE_MINUTE)).isEmpty();
    }

    @Test
    void theLastFifteenMinutesForgetWhatIsOlderThanSixteen() {
        refuse("p", "long-ago", 1);
        clock.advance(Duration.ofMinutes(14));
        refuse("p", "recent", 1);
        assertThat(keys(Window.FIFTEEN_MINUTES)).containsExactlyInAnyOrder("long-ago", "recent");

        clock.advance(Duration.ofMinutes(3));
        assertThat(keys(Window.FIFTEEN_MINUTES)).containsExactly("recent");

        clock.advance(Duration.ofMinutes(17));
        assertThat(keys(Window.FIFTEEN_MINUTES)).isEmpty();
        assertThat(top.top("p", Measure.REFUSED, Window.FIFTEEN_MINUTES, 10).total())
                .isZero();
    }

    @Test
    void aFloodOfAMillionDistinctKeysOverTwentyMinutesHoldsAFixedNumberOfKeys() {
        for (int i = 0; i < 1_000_000; i++) {
            top.refused("p", "random-" + i);
            top.charged("p", "random-" + i, 1);
            if (i % 4 == 0) {
                top.refused("p", "flooder"); // a fifth of the refusals: over what any epoch's summary may miss
            }
            if (i % 1_000 == 0) {
                clock.advance(Duration.ofMillis(1_200)); // twenty minutes in all
            }
        }

        assertThat(top.heldKeys())
                .as("four stripes, six epochs and fifteen minutes of 16 keys, for each of two measures")
                .isLessThanOrEqualTo(2 * (4 + 6 + 15) * 16);
        Report report = top.top("p", Measure.REFUSED, Window.FIFTEEN_MINUTES, 1);
        assertThat(report.keys()).extracting(TopKey::key).containsExactly("flooder");
    }

    @Test
    void threadsRecordingAtOnceLoseNothingAcrossEpochs() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                done.add(threads.submit(() -> {
                    start.await();
                    for (int i = 0; i < 5_000; i++) {
                        top.refused("p", "thread-" + thread);
                        if (thread == 0 && i % 500 == 0) {
                            clock.advance(Duration.ofSeconds(3)); // epochs close while the others record
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : done) {
                future.get();
            }
        } finally {
            threads.shutdownNow();
        }

        Report report = top.top("p", Measure.REFUSED, Window.FIFTEEN_MINUTES, 8);
        assertThat(report.total()).isEqualTo(8 * 5_000);
        assertThat(report.keys()).allSatisfy(key -> assertThat(key.count()).isEqualTo(5_000));
    }

    @Test
    void readsTheMeasureAndWindowAsARequestNamesThem() {
        assertThat(Measure.of("refused")).isEqualTo(Measure.REFUSED);
        assertThat(Measure.of("charged")).isEqualTo(Measure.CHARGED);
        assertThat(Window.of("15m")).isEqualTo(Window.FIFTEEN_MINUTES);
        assertThatThrownBy(() -> Measure.of("used"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("by must be refused or charged, was 'used'");
        assertThatThrownBy(() -> Window.of("1h"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("window must be 1m or 15m, was '1h'");
    }

    @Test
    void findsAListedKeyByItsDigestAndNoOther() {
        refuse("per-key", "header:x-api-key:k-secret", 3);
        top.charged("per-key", "header:x-api-key:k-charged", 5);
        refuse("other", "header:x-api-key:k-elsewhere", 1);

        assertThat(top.keyOf("per-key", KeyDisplay.digest("header:x-api-key:k-secret")))
                .contains("header:x-api-key:k-secret");
        assertThat(top.keyOf("per-key", KeyDisplay.digest("header:x-api-key:k-charged")))
                .contains("header:x-api-key:k-charged");
        assertThat(top.keyOf("per-key", KeyDisplay.digest("header:x-api-key:k-elsewhere")))
                .isEmpty();
        assertThat(top.keyOf("per-key", "not-a-digest")).isEmpty();
    }

    @Test
    void mergesTheCountsOtherInstancesExportedWithItsOwn() {
        HeavyHitters other = new HeavyHitters(clock, 16);
        refuse("per-ip", "ip:10.0.0.1", 10);
        refuse("per-ip", "ip:10.0.0.2", 3);
        for (int i = 0; i < 5; i++) {
            other.refused("per-ip", "ip:10.0.0.1");
        }
        for (int i = 0; i < 7; i++) {
            other.refused("per-ip", "ip:10.0.0.3");
        }
        other.charged("elsewhere", "k", 4);

        Report report = top.top("per-ip", Measure.REFUSED, Window.ONE_MINUTE, 10, List.of(other.export()));

        assertThat(report.keys())
                .extracting(TopKey::key, TopKey::count, TopKey::error)
                .containsExactly(
                        tuple("ip:10.0.0.1", 15L, 0L), tuple("ip:10.0.0.3", 7L, 0L), tuple("ip:10.0.0.2", 3L, 0L));
        assertThat(report.total()).isEqualTo(25);
        assertThat(report.errorBound()).isZero();
        assertThat(report.instances()).isEqualTo(2);
        assertThat(top.top("elsewhere", Measure.CHARGED, Window.FIFTEEN_MINUTES, 10, List.of(other.export()))
                        .keys())
                .extracting(TopKey::key, TopKey::count)
                .containsExactly(tuple("k", 4L));
        assertThat(top.keyOf("per-ip", KeyDisplay.digest("ip:10.0.0.3"), List.of(other.export())))
                .contains("ip:10.0.0.3");
    }

    @Test
    void anotherInstancesFullSummaryCarriesItsBoundIntoTheMerge() {
        HeavyHitters other = new HeavyHitters(clock, 8);
        for (int i = 0; i < 100; i++) {
            other.refused("p", "k" + i); // 100 distinct keys through 8 places: every count may be off
        }
        refuse("p", "heavy", 50);

        Report report = top.top("p", Measure.REFUSED, Window.ONE_MINUTE, 3, List.of(other.export()));

        assertThat(report.total()).isEqualTo(150);
        assertThat(report.keys().get(0).key()).isEqualTo("heavy");
        assertThat(report.keys().get(0).count() - report.keys().get(0).error())
                .as("its count less its error is at most its truth")
                .isLessThanOrEqualTo(50);
        assertThat(report.keys().get(0).count()).isGreaterThanOrEqualTo(50);
        assertThat(report.errorBound()).isPositive().isLessThanOrEqualTo(3 * 150 / 8);
    }

    @Test
    void leavesOutBytesThatAreNotAnExportAndCountsOnlyTheInstancesItRead() {
        refuse("p", "a", 2);
        byte[] truncated = java.util.Arrays.copyOf(new HeavyHitters(clock, 8).export(), 5);

        Report report =
                top.top("p", Measure.REFUSED, Window.ONE_MINUTE, 10, List.of("not an export".getBytes(), truncated));

        assertThat(report.instances()).isEqualTo(1);
        assertThat(report.keys()).extracting(TopKey::key).containsExactly("a");
    }

    @Test
    void onTheSystemClockADecisionIsCountedAtOnceAndPlacedWithinATickOfItsTime() throws Exception {
        HeavyHitters system = new HeavyHitters(TimeSource.system(), 16);
        for (int i = 0; i < 3; i++) {
            system.refused("p", "now");
        }

        assertThat(system.top("p", Measure.REFUSED, Window.ONE_MINUTE, 10).keys())
                .extracting(TopKey::key, TopKey::count)
                .containsExactly(tuple("now", 3L));
        long lag = TimeSource.system().nowMicros() - CoarseTime.nowMicros();
        assertThat(lag).as("µs the coarse time is behind").isLessThan(1_000_000);
    }

    @Test
    void refusesACapacityOutOfRange() {
        assertThatThrownBy(() -> new HeavyHitters(clock, 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capacity must be 8 to 4096, was 4");
    }

    private void refuse(String policy, String key, int times) {
        for (int i = 0; i < times; i++) {
            top.refused(policy, key);
        }
    }

    private List<String> keys(Window window) {
        return top.top("p", Measure.REFUSED, window, 10).keys().stream()
                .map(TopKey::key)
                .toList();
    }
}
