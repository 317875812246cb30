package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NormalPathTest {

    private static NormalPath normal(String raw) {
        return NormalPath.parse(raw, PathSettings.DEFAULT);
    }

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "/api/hello           | /api/hello",
                "//api/hello          | /api/hello",
                "/api//hello          | /api/hello",
                "/x/../api/hello      | /api/hello",
                "/api/./hello         | /api/hello",
                "/./api/hello         | /api/hello",
                "/%61pi/hello         | /api/hello",
                "/a/b/%2e%2E/..;/x/../api/hello;v=1 | /api/hello",
                "/x/..;/api/hello     | /api/hello",
                "/x/%2e%2e/api/hello  | /api/hello",
                "/api/hello;x=1       | /api/hello",
                "/api/;x/hello        | /api/hello",
                "/api/hello/          | /api/hello/",
                "/api/hello/.         | /api/hello/",
                "/api/hello/..        | /api/",
                "/                    | /",
                "//                   | /",
                "/API/Hello           | /API/Hello",
                "//x/..;/%61pi//x;v=1 | /api/x",
            })
    void readsEveryFormOfAPathAsItsOneNormalForm(String raw, String normal) {
        NormalPath path = normal(raw);

        assertThat(path.encoded()).isEqualTo(normal);
        assertThat(path.decoded()).isEqualTo(normal);
    }

    @Test
    void keepsEscapesOfReservedAndNonAsciiCharactersInUpperCaseAndDecodesThemForRules() {
        NormalPath path = normal("/files/caf%c3%a9/a%3bb/%25/x%20y");

        assertThat(path.encoded()).isEqualTo("/files/caf%C3%A9/a%3Bb/%25/x%20y");
        assertThat(path.decoded()).isEqualTo("/files/café/a;b/%/x y");
    }

    @Test
    void escapesCharactersThatAUriMayNotHoldUnescaped() {
        NormalPath path = normal("/a|b/{c}");

        assertThat(path.encoded()).isEqualTo("/a%7Cb/%7Bc%7D");
        assertThat(path.decoded()).isEqualTo("/a|b/{c}");
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "/api\\hello      | backslash",
                "/api%5chello     | backslash",
                "/api%2Fhello     | encoded '/'",
                "/api/hello%00    | %00",
                "/api/%zz         | malformed escape",
                "/api/%4          | malformed escape",
                "/api/%c0%ae%c0%ae/x | not UTF-8",
                "/api/%ff         | not UTF-8",
                "/api/héllo       | U+00E9",
                "/api/hello#x     | '#'",
                "/../etc          | climbs above the root",
                "/api/../../etc   | climbs above the root",
                "api/hello        | must start with '/'",
            })
    void refusesAPathThatServersReadInDifferentWaysNamingWhy(String raw, String why) {
        assertThatThrownBy(() -> normal(raw))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(why);
    }

    @Test
    void namesTheSettingThatWouldAcceptARefusedForm() {
        assertThatThrownBy(() -> normal("/a\\b")).hasMessageContaining("paths.backslash");
        assertThatThrownBy(() -> normal("/a%2Fb")).hasMessageContaining("paths.encoded-slash");
        assertThatThrownBy(() -> NormalPath.parse("/a//b", settings(false, "refuse", "refuse", "drop")))
                .hasMessageContaining("paths.merge-slashes");
    }

    @Test
    void readsABackslashAsASlashWhereTheSettingsSaySo() {
        NormalPath path = NormalPath.parse("/api\\hello/x%5C..%5cy", settings(true, "slash", "refuse", "drop"));

        assertThat(path.encoded()).isEqualTo("/api/hello/y");
    }

    @Test
    void keepsAnEncodedSlashWithinItsSegmentWhereTheSettingsSaySo() {
        NormalPath path = NormalPath.parse("/repos/a%2fb/../c%2Fd", settings(true, "refuse", "keep", "drop"));

        assertThat(path.encoded()).isEqualTo("/repos/c%2Fd");
        assertThat(path.decoded()).isEqualTo("/repos/c%2Fd");
    }

    @Test
    void forwardsParametersWhereTheSettingsKeepThemWhileRulesMatchThePathWithout() {
        NormalPath path = NormalPath.parse("/api/users;v=2/..;x/42;a=%41", settings(true, "refuse", "refuse", "keep"));

        assertThat(path.encoded()).isEqualTo("/api/42;a=A");
        assertThat(path.decoded()).isEqualTo("/api/42");
    }

    @Test
    void aPathAlreadyNormalIsItsOwnNormalForm() {
        String raw = "/api/v1/users/42:archive@x~y_z-w.json";

        assertThat(normal(raw).encoded()).isSameAs(raw);
    }

    private static PathSettings settings(boolean merge, String backslash, String encodedSlash, String parameters) {
        return new PathSettings(
                merge,
                PathSettings.Backslash.valueOf(backslash.toUpperCase()),
                PathSettings.EncodedSlash.valueOf(encodedSlash.toUpperCase()),
                PathSettings.Parameters.valueOf(parameters.toUpperCase()));
    }
}
