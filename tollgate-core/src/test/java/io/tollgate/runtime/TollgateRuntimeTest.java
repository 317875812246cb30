package io.tollgate.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.guard.MetricsRecorder;
import io.tollgate.internal.store.MemoryStoreProvider;
import io.tollgate.spi.StoreContext;
import io.tollgate.top.HeavyHitters;
import io.tollgate.top.KeyDisplay;
import io.tollgate.top.TopKeys;
import io.tollgate.top.TopKeysSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TollgateRuntimeTest {

    private static final Policy POLICY = Policy.of("per-client", Limit.of(2, Rate.perHour(1)));
    private static final TopKeysSettings COUNTED = new TopKeysSettings(true, KeyDisplay.WHOLE, 64);

    @Test
    void opensTheStoreTheConfigurationChoosesMemoryByDefault() {
        try (TollgateRuntime tollgate =
                TollgateRuntime.open(ConfigNode.of(Map.of("memory", Map.of("maximum-keys", 10))))) {
            assertThat(tollgate.settings()).isEqualTo(new MemoryStoreProvider.Settings(10));
            assertThat(tollgate.description()).isEqualTo("memory");
            assertThat(tollgate.store().inProcess()).isTrue();
            assertThat(tollgate.limiter().tryAcquire("alice", POLICY, 2).allowed())
                    .isTrue();
            assertThat(tollgate.limiter().tryAcquire("alice", POLICY, 1).allowed())
                    .isFalse();
            assertThat(tollgate.topKeys())
                    .as("no top-keys section: nothing counted")
                    .isEmpty();
        }
    }

    @Test
    void aConfigurationTheRuntimeCannotOpenIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> TollgateRuntime.open(ConfigNode.of(Map.of("memory", Map.of("maximum-keys", -1)))))
                .isInstanceOf(ConfigException.class)
                .hasMessage("memory.maximum-keys: must be at least 1, was -1");
        assertThatThrownBy(() -> TollgateRuntime.open(ConfigNode.of(Map.of("top-keys", Map.of("capacity", 3)))))
                .isInstanceOf(ConfigException.class)
                .hasMessage("top-keys.capacity: must be 8 to 4096, was 3");
    }

    @Test
    void theLimiterReportsToTheRecorderTheSurfaceGave() {
        List<String> decided = new ArrayList<>();
        MetricsRecorder recorder = new MetricsRecorder() {
            @Override
            public void decided(Policy policy, boolean allowed, String source) {
                decided.add(policy.name() + " " + allowed + " " + source);
            }
        };
        try (TollgateRuntime tollgate = TollgateRuntime.open(
                MemoryStoreProvider.Settings.DEFAULTS, new StoreContext(null, List.of(recorder)))) {
            tollgate.limiter().tryAcquire("alice", POLICY, 1);

            assertThat(decided).containsExactly("per-client true memory");
        }
    }

    @Test
    void aTopKeysSectionCountsWhoIsLimitedUntilTheRuntimeCloses() {
        TollgateRuntime tollgate =
                TollgateRuntime.open(ConfigNode.of(Map.of("top-keys", Map.of("show", "whole"))), StoreContext.PLAIN);
        RateLimiter limiter = tollgate.limiter();
        for (int i = 0; i < 5; i++) {
            limiter.tryAcquire("mallory", POLICY, 1);
        }
        TopKeys counts = tollgate.topKeys().orElseThrow();
        long before = refused(counts);

        tollgate.close();
        tollgate.close(); // a second close does nothing
        limiter.tryAcquire("mallory", POLICY, 1);

        assertThat(before).isEqualTo(3);
        assertThat(refused(counts)).as("closed: the counts no longer listen").isEqualTo(3);
    }

    @Test
    void topKeysTurnedOffCountNothing() {
        try (TollgateRuntime tollgate = TollgateRuntime.open(
                MemoryStoreProvider.Settings.DEFAULTS,
                new StoreContext(null, List.of(new TopKeysSettings(false, KeyDisplay.MASKED, 64))))) {
            assertThat(tollgate.topKeys()).isEmpty();
        }
        try (TollgateRuntime tollgate =
                TollgateRuntime.open(MemoryStoreProvider.Settings.DEFAULTS, new StoreContext(null, List.of(COUNTED)))) {
            assertThat(tollgate.topKeys()).isPresent();
            assertThat(tollgate).hasToString("TollgateRuntime[memory, top keys]");
        }
    }

    private static long refused(TopKeys counts) {
        return counts
                .top("per-client", HeavyHitters.Measure.REFUSED, HeavyHitters.Window.ONE_MINUTE, 10)
                .report()
                .keys()
                .stream()
                .filter(key -> key.key().equals("mallory"))
                .mapToLong(key -> key.count())
                .sum();
    }
}
