package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** Reading one claim of a bearer JWT's payload, unverified, and nothing from anything else. */
class JwtClaimsTest {

    private static String bearer(String payload) {
        Base64.Encoder base64 = Base64.getUrlEncoder().withoutPadding();
        return "Bearer e30." + base64.encodeToString(payload.getBytes(StandardCharsets.UTF_8)) + ".sig";
    }

    @Test
    void readsATopLevelStringOrNumberClaim() {
        assertThat(JwtClaims.claim(bearer("{\"plan\":\"gold\"}"), "plan")).isEqualTo("gold");
        assertThat(JwtClaims.claim(bearer("{ \"tier\" : 3 }"), "tier")).isEqualTo("3");
        assertThat(JwtClaims.claim(bearer("{\"p\":\"a\\\"b\\u00e9\"}"), "p")).isEqualTo("a\"bé");
    }

    @Test
    void skipsNestedValuesThatHoldTheSameName() {
        String payload = "{\"org\":{\"plan\":\"free\",\"list\":[\"plan\",{\"plan\":1}]},\"s\":\"}\",\"plan\":\"gold\"}";

        assertThat(JwtClaims.claim(bearer(payload), "plan")).isEqualTo("gold");
    }

    @Test
    void givesNothingForWhatIsNotABearerJwtWithTheClaimAsAScalar() {
        assertThat(JwtClaims.claim(null, "plan")).isNull();
        assertThat(JwtClaims.claim("Basic dXNlcjpwYXNz", "plan")).isNull();
        assertThat(JwtClaims.claim("Bearer opaque-token", "plan")).isNull();
        assertThat(JwtClaims.claim("Bearer a.!!!.c", "plan")).isNull();
        assertThat(JwtClaims.claim(bearer("not json"), "plan")).isNull();
        assertThat(JwtClaims.claim(bearer("{\"plan\":{\"name\":\"gold\"}}"), "plan"))
                .isNull();
        assertThat(JwtClaims.claim(bearer("{\"plan\":true}"), "plan")).isNull();
        assertThat(JwtClaims.claim(bearer("{\"plan\":\"gold"), "plan")).isNull();
        assertThat(JwtClaims.claim(bearer("{\"plan\":\"\\uZZZZ\"}"), "plan")).isNull();
        assertThat(JwtClaims.claim("Bearer e30." + "A".repeat(JwtClaims.MAX_TOKEN_LENGTH) + ".s", "plan"))
                .isNull();
    }
}
