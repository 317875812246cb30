package io.tollgate.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.Decision;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.redis.internal.store.RedisStoreProvider;
import io.tollgate.runtime.Stores;
import io.tollgate.runtime.TollgateRuntime;
import io.tollgate.spi.OpenedStore;
import io.tollgate.spi.StoreContext;
import io.tollgate.spi.StoreSettings;
import io.tollgate.testing.RedisServer;
import io.tollgate.top.HeavyHitters;
import io.tollgate.top.KeyDisplay;
import io.tollgate.top.TopKeysSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Redis as a store that a configuration chooses by its {@code redis} section, found by the service loader. */
@Timeout(60)
class RedisStoreProviderTest {

    private static final Policy POLICY = Policy.of("per-client", Limit.of(2, Rate.perHour(1)));
    private static final TopKeysSettings COUNTED = new TopKeysSettings(true, KeyDisplay.WHOLE, 64);

    @Test
    void aRedisSectionChoosesRedisAndSaysWhere() {
        StoreSettings store = Stores.read(ConfigNode.of(Map.of("redis", Map.of("uri", "redis://127.0.0.1:6390"))));

        assertThat(Stores.sections()).containsExactly("memory", "redis");
        assertThat(store).isInstanceOf(RedisStoreProvider.Settings.class);
        assertThat(store.name()).isEqualTo("redis");
        assertThat(store.description()).isEqualTo("redis at redis://127.0.0.1:6390");
        assertThat(store.needs()).isEmpty();
        assertThat(Stores.read(ConfigNode.of(Map.of("redis", Map.of()))).needs())
                .hasValue("needs uri (one server, Sentinel or TLS) or cluster-uris (the seed nodes of a cluster)");
    }

    @Test
    void aFileThatNamesTwoStoresIsRefused() {
        assertThatThrownBy(() -> Stores.read(
                        ConfigNode.of(Map.of("memory", Map.of(), "redis", Map.of("uri", "redis://127.0.0.1:6390")))))
                .isInstanceOf(ConfigException.class)
                .hasMessage("memory: applies only without redis; choose one");
    }

    @Test
    void twoRuntimesOnOneRedisShareTheLimitAndWhoItLimits() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            // A budget that a busy machine's first call (a cold connection, the script's first load) cannot
            // outrun: this test is about Redis deciding for both, not about what the failure policy does when late
            StoreSettings store =
                    Stores.read(ConfigNode.of(Map.of("redis", Map.of("uri", server.uri(), "timeout", "5s"))));
            StoreContext counted = new StoreContext(null, List.of(COUNTED));
            try (TollgateRuntime one = TollgateRuntime.open(store, counted);
                    TollgateRuntime other = TollgateRuntime.open(store, counted)) {
                List<Decision> decisions = List.of(
                        one.limiter().tryAcquire("alice", POLICY, 1),
                        other.limiter().tryAcquire("alice", POLICY, 1),
                        one.limiter().tryAcquire("alice", POLICY, 1));

                assertThat(decisions)
                        .as("decisions %s", decisions)
                        .extracting(Decision::allowed)
                        .containsExactly(true, true, false);
                assertThat(one.store().ping().toCompletableFuture().get()).isEmpty();
                assertThat(one.store().inProcess()).isFalse();
                assertThat(one.store().details()).containsEntry("circuit", "closed");
                // The other instance's counts arrive with its next summary: within one interval of publishing
                long deadline = System.nanoTime() + 20_000_000_000L;
                HeavyHitters.Report charged;
                do {
                    Thread.sleep(100);
                    charged = other.topKeys()
                            .orElseThrow()
                            .top("per-client", HeavyHitters.Measure.CHARGED, HeavyHitters.Window.ONE_MINUTE, 10)
                            .report();
                } while (charged.total() < 2 && System.nanoTime() < deadline);
                assertThat(charged.instances()).isEqualTo(2);
                assertThat(charged.keys())
                        .singleElement()
                        .satisfies(key -> assertThat(key.count()).isEqualTo(2));
            }
        }
    }

    @Test
    void aLimiterTheApplicationBuiltIsAdoptedAndLeftOpen() throws Exception {
        try (RedisServer server = RedisServer.start();
                // a budget a cold first call cannot outrun: the claim is the view's closing, not the budget's
                RedisRateLimiter own = RedisRateLimiter.builder()
                        .uri(server.uri())
                        .timeout(Duration.ofSeconds(5))
                        .build()) {
            OpenedStore adopted = Stores.adopt(own).orElseThrow();

            adopted.close();

            assertThat(adopted.name()).isEqualTo("redis");
            assertThat(own.tryAcquire("alice", POLICY, 1).allowed())
                    .as("closing the view leaves the application's limiter open")
                    .isTrue();
            assertThat(own.ping().toCompletableFuture().get()).isEmpty();
        }
    }
}
