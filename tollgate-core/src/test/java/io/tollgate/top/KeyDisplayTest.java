package io.tollgate.top;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KeyDisplayTest {

    @Test
    void showsAKeyWholeOnlyWhenAskedTo() {
        assertThat(KeyDisplay.WHOLE.show("header:x-api-key:sk_live_0123456789"))
                .isEqualTo("header:x-api-key:sk_live_0123456789");
    }

    @Test
    void masksTheValueOfAKeyButForItsFirstCharactersAndADigest() {
        String digest = KeyDisplay.digest("header:x-api-key:sk_live_0123456789");

        assertThat(KeyDisplay.MASKED.show("header:x-api-key:sk_live_0123456789"))
                .isEqualTo("header:x-api-key:sk_l…" + digest);
        assertThat(digest).hasSize(16).matches("[0-9a-f]+");
    }

    @Test
    void masksAnIpv6AddressAfterTheKindOfItsKey() {
        assertThat(KeyDisplay.MASKED.show("ip:2001:db8::1"))
                .startsWith("ip:2001…")
                .doesNotContain("db8");
    }

    @Test
    void masksAShortValueWhole() {
        assertThat(KeyDisplay.MASKED.show("user")).isEqualTo("…" + KeyDisplay.digest("user"));
    }

    @Test
    void showsOnlyADigestWhenAskedTo() {
        assertThat(KeyDisplay.DIGEST.show("ip:10.0.0.1")).isEqualTo("sha256:" + KeyDisplay.digest("ip:10.0.0.1"));
    }

    @Test
    void namesAnUnknownDisplay() {
        assertThat(KeyDisplay.of("Masked")).isEqualTo(KeyDisplay.MASKED);
        assertThatThrownBy(() -> KeyDisplay.of("hidden"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("must be whole, masked or digest, was 'hidden'");
    }
}
