package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ConfigNodeTest {

    private final ConfigNode root = YamlConfig.parse("""
            server:
              port: 8080
              timeout: 50ms
            names: [a, b]
            """);

    @Test
    void readsNestedSettingsWithTheirPathsAndLines() {
        ConfigNode port = root.child("server").child("port");

        assertThat(port.longValue(0)).isEqualTo(8080);
        assertThat(port.path()).isEqualTo("server.port");
        assertThat(port.line()).isEqualTo(2);
        assertThat(root.child("names").strings()).containsExactly("a", "b");
        assertThat(root.child("absent").child("deeper").isPresent()).isFalse();
    }

    @ParameterizedTest
    @CsvSource({"50ms, PT0.05S", "30s, PT30S", "5m, PT5M", "2h, PT2H", "1d, PT24H", "250us, PT0.00025S", "10 s, PT10S"})
    void readsDurationsWithAUnit(String text, Duration expected) {
        assertThat(ConfigNode.of(Map.of("t", text)).child("t").duration(null)).isEqualTo(expected);
    }

    @Test
    void rejectsADurationWithoutAUnitOrOfZero() {
        assertThatThrownBy(() -> root.child("server").child("port").duration(null))
                .isInstanceOf(ConfigException.class)
                .hasMessage("server.port: must be a duration such as 50ms, 30s or 5m, was '8080'")
                .satisfies(e -> assertThat(((ConfigException) e).line()).isEqualTo(2));
        assertThatThrownBy(() -> ConfigNode.of(Map.of("t", "0s")).child("t").duration(null))
                .hasMessage("t: must be longer than zero, was '0s'");
    }

    @Test
    void anUnknownSettingIsNamedWithTheKnownOnes() {
        assertThatThrownBy(() -> root.child("server").checkKeys(Set.of("port")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("server: unknown setting 'timeout'; known: port")
                .satisfies(e -> assertThat(((ConfigException) e).messageIn("tollgate.yaml"))
                        .isEqualTo("tollgate.yaml:3: server: unknown setting 'timeout'; known: port"));
    }

    @Test
    void aScalarHasNoSettings() {
        assertThatThrownBy(() -> root.child("server").child("port").child("x"))
                .hasMessage("server.port: must be a map of settings, was '8080'");
        assertThatThrownBy(() -> ConfigNode.of(Map.of("names", List.of("a")))
                        .child("names")
                        .string(null))
                .hasMessage("names: must be a single value, was a list");
    }
}
