package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ClientKeyTest {

    private final ClientIpResolver ips = ClientIpResolver.peerOnly();
    private final TestRequest request = TestRequest.get("/")
            .from("203.0.113.7")
            .header("X-API-Key", "k-123")
            .query("token", "t-9")
            .principal("alice");

    @Test
    void keysNameTheirSourceSoThatSourcesNeverCollide() {
        assertThat(ClientKey.ip().resolve(request, ips)).isEqualTo("ip:203.0.113.7");
        assertThat(ClientKey.header("X-API-Key").resolve(request, ips)).isEqualTo("header:x-api-key:k-123");
        assertThat(ClientKey.query("token").resolve(request, ips)).isEqualTo("query:token:t-9");
        assertThat(ClientKey.principal().resolve(request, ips)).isEqualTo("principal:alice");
        assertThat(ClientKey.constant("global").resolve(request, ips)).isEqualTo("constant:global");
    }

    @Test
    void aCompositeKeyJoinsItsPartsAndIsMissingIfAnyIs() {
        ClientKey perKeyPerIp = ClientKey.composite(ClientKey.header("X-API-Key"), ClientKey.ip());

        assertThat(perKeyPerIp.resolve(request, ips)).isEqualTo("header:x-api-key:k-123|ip:203.0.113.7");
        assertThat(perKeyPerIp.resolve(TestRequest.get("/"), ips)).isNull();
    }

    @Test
    void aHeaderGivenTwiceIsAnAmbiguityAlsoWithinACompositeKey() {
        TestRequest twice = TestRequest.get("/").header("X-API-Key", "mine").header("X-API-Key", "victim");
        ClientKey perKeyPerIp = ClientKey.composite(ClientKey.ip(), ClientKey.header("X-API-Key"));

        assertThat(ClientKey.header("X-API-Key").ambiguity(twice))
                .isEqualTo("This request gives X-API-Key 2 times; a client is named once.");
        assertThat(perKeyPerIp.ambiguity(twice)).isNotNull();
        assertThat(ClientKey.header("X-API-Key").ambiguity(request)).isNull();
        assertThat(ClientKey.ip().ambiguity(twice)).isNull();
    }

    @Test
    void aValueCannotPoseAsTwoParts() {
        TestRequest sneaky = TestRequest.get("/").header("X-API-Key", "k|ip:203.0.113.7");

        assertThat(ClientKey.header("X-API-Key").resolve(sneaky, ips)).isEqualTo("header:x-api-key:k\\|ip:203.0.113.7");
    }

    @Test
    void aMissingOrBlankSourceIsNoKey() {
        TestRequest bare = TestRequest.get("/").header("X-API-Key", "  ");

        assertThat(ClientKey.header("X-API-Key").resolve(bare, ips)).isNull();
        assertThat(ClientKey.query("token").resolve(bare, ips)).isNull();
        assertThat(ClientKey.principal().resolve(bare, ips)).isNull();
    }

    @Test
    void parsesTheWrittenForms() {
        assertThat(ClientKey.parse("ip")).isEqualTo(ClientKey.ip());
        assertThat(ClientKey.parse("header:X-API-Key")).isEqualTo(ClientKey.header("X-API-Key"));
        assertThat(ClientKey.parse("query:token")).isEqualTo(ClientKey.query("token"));
        assertThat(ClientKey.parse("principal")).isEqualTo(ClientKey.principal());
        assertThat(ClientKey.parse("constant:all")).isEqualTo(ClientKey.constant("all"));
        assertThat(ClientKey.parse("ip+header:X-API-Key").describe()).isEqualTo("ip+header:X-API-Key");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "address", "header", "header:", "ip:1.2.3.4", "constant:", "ip+", "cookie:sid"})
    void rejectsTextThatIsNotAKey(String text) {
        assertThatThrownBy(() -> ClientKey.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("invalid key");
    }

    @Test
    void recordsBuiltDirectlyAreCheckedAsTheFactoriesCheckThem() {
        assertThatThrownBy(() -> new ClientKey.Header(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("header name must not be blank");
        assertThatThrownBy(() -> new ClientKey.Query(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("query parameter name");
        assertThatThrownBy(() -> new ClientKey.Constant(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new ClientKey.Composite(List.of(ClientKey.ip())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least two parts, has 1");
        assertThatThrownBy(() -> new MissingKey.Reject(200))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("4xx status, was 200");
        assertThatThrownBy(() -> new MissingKey.Fallback(null)).isInstanceOf(NullPointerException.class);
    }
}
