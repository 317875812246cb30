package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PathPatternTest {

    @ParameterizedTest
    @CsvSource({
        "/api/**, /api, true",
        "/api/**, /api/, true",
        "/api/**, /api/users/42, true",
        "/api/**, /apix, false",
        "/api/**, /other/api, false",
        "/**, /, true",
        "/**, /anything/at/all, true",
        "/, /, true",
        "/, /x, false",
        "/users/*/orders, /users/7/orders, true",
        "/users/*/orders, /users/7/8/orders, false",
        "/users/*, /users/7, true",
        "/users/*, /users/7/orders, false",
        "/files/*.txt, /files/a.txt, true",
        "/files/*.txt, /files/a.png, false",
        "/a/**/z, /a/z, true",
        "/a/**/z, /a/b/c/z, true",
        "/a/**/z, /a/b/c/y, false",
        "/a.b/c, /aXb/c, false",
        "/a/**/z/*.txt, /a/b/z/c/z/d.txt, true",
        "/a/**/z/*.txt, /a/b/z/c/z/d.png, false",
        "/**/admin, /x/y/admin, true",
        "/**/admin, /admin, true",
        "/*-v*/x, /api-v2/x, true",
        "/*-v*/x, /api-2/x, false",
        "/users/*, /users/, true",
        "/api/**, '', false"
    })
    void matchesStarsAsDocumented(String pattern, String path, boolean matches) {
        assertThat(PathPattern.of(pattern).matches(path)).isEqualTo(matches);
    }

    @Test
    void matchesTheRawPathSoAnEncodedSlashIsNotASeparator() {
        assertThat(PathPattern.of("/api/*").matches("/api/a%2Fb")).isTrue();
        assertThat(PathPattern.of("/api/a/b").matches("/api/a%2Fb")).isFalse();
    }

    @Test
    void matchesAPathWhateverItsCaseUnlessTheCaseMustBeExact() {
        assertThat(PathPattern.of("/api/**").matches("/API/Hello")).isTrue();
        assertThat(PathPattern.of("/api/v*/users").matches("/Api/V2/USERS")).isTrue();
        assertThat(PathPattern.of("/api/**").withExactCase().matches("/API/Hello"))
                .isFalse();
        assertThat(PathPattern.of("/api/v*/users").withExactCase().matches("/api/V2/users"))
                .isFalse();
        assertThat(PathPattern.of("/api/v*/users").withExactCase().matches("/api/v2/users"))
                .isTrue();
    }

    @Test
    void aPathOfThousandsOfSegmentsIsMatchedWithoutRecursion() {
        String hostile = "/a".repeat(4_000);
        String stars = "/" + "a".repeat(8_000);

        assertThat(PathPattern.of("/**/a/**/b/**/c/*x").matches(hostile)).isFalse();
        assertThat(PathPattern.of("/**/a/**/a").matches(hostile)).isTrue();
        assertThat(PathPattern.of("/*a*a*a*a*b").matches(stars)).isFalse();
    }

    @Test
    void rejectsAPatternThatDoesNotStartWithASlash() {
        assertThatThrownBy(() -> PathPattern.of("api/**"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must start with '/'");
    }

    @Test
    void rejectsDoubleStarsInsideASegment() {
        assertThatThrownBy(() -> PathPattern.of("/api/a**"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("whole path segment");
    }
}
