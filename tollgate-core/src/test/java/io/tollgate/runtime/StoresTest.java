package io.tollgate.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.RateLimiter;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import io.tollgate.fixtures.LimiterOfItsOwn;
import io.tollgate.internal.store.MemoryStoreProvider;
import io.tollgate.spi.OpenedStore;
import io.tollgate.spi.StoreProvider;
import io.tollgate.spi.StoreSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

class StoresTest {

    @Test
    void theMemoryStoreIsAProviderTheServiceLoaderFinds() {
        List<String> sections = new ArrayList<>();
        ServiceLoader.load(StoreProvider.class).forEach(provider -> sections.add(provider.section()));

        assertThat(sections).contains("memory");
        assertThat(Stores.sections()).startsWith("memory");
    }

    @Test
    void aConfigurationThatNamesNoStoreKeepsItsBucketsInMemoryWithTheDefaults() {
        StoreSettings store = Stores.read(ConfigNode.of(Map.of("policies", Map.of())));

        assertThat(store).isEqualTo(MemoryStoreProvider.Settings.DEFAULTS);
        assertThat(store.description()).isEqualTo("memory");
        assertThat(store.needs()).isEmpty();
    }

    @Test
    void theStoresSectionIsReadByItsProvider() {
        StoreSettings store = Stores.read(ConfigNode.of(Map.of("memory", Map.of("maximum-keys", 5))));

        assertThat(store).isEqualTo(new MemoryStoreProvider.Settings(5));
    }

    @Test
    void aBadSettingOfTheStoresSectionIsNamed() {
        assertThatThrownBy(() -> Stores.read(ConfigNode.of(Map.of("memory", Map.of("maximum-keys", 0)))))
                .isInstanceOf(ConfigException.class)
                .hasMessage("memory.maximum-keys: must be at least 1, was 0");
        assertThatThrownBy(() -> Stores.read(ConfigNode.of(Map.of("memory", Map.of("maximum-key", 5)))))
                .isInstanceOf(ConfigException.class)
                .hasMessage("memory: unknown setting 'maximum-key'; known: maximum-keys");
    }

    @Test
    void aStoreNoProviderOwnsIsRefusedNamingTheStoresFound() {
        assertThatThrownBy(() -> Stores.read("hazelcast", ConfigNode.of(Map.of("hazelcast", Map.of()))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("has no store 'hazelcast'; stores found: memory");
        assertThatThrownBy(() -> Stores.schema("hazelcast"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no store 'hazelcast' was found");
    }

    @Test
    void theStoresSectionsJoinTheKeysOfTheFile() {
        ConfigSection top = Stores.withSections(ConfigSection.of("file", "policies"));

        assertThat(top.keys()).contains("policies", "memory");
        assertThat(top.section("memory")).isEqualTo(MemoryStoreProvider.SCHEMA);
    }

    @Test
    void aLimiterInMemoryIsAdoptedAsAStoreThatAlwaysAnswersAndSharesNothing() throws Exception {
        RateLimiter own = InMemoryRateLimiter.builder().build();

        OpenedStore adopted = Stores.adopt(own).orElseThrow();

        assertThat(adopted.limiter()).isSameAs(own);
        assertThat(adopted.inProcess()).isTrue();
        assertThat(adopted.ping().toCompletableFuture().get()).isEmpty();
        assertThat(adopted.shareSummaries(() -> new byte[0])).isNull();
        RateLimiter ofItsOwn = new LimiterOfItsOwn(own, "of its own");
        assertThat(Stores.adopt(ofItsOwn)).as("a limiter no provider knows").isEmpty();
    }
}
