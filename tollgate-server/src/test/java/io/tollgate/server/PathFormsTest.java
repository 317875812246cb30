package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.http.PathSettings;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every form of a path that a client may send for {@code /api/hello}, as a hostile client sends it (raw bytes on a
 * socket), through the proxy to a real upstream: each is limited under the rule for {@code /api/**} with the path
 * the rule matched forwarded, or refused with 400 and forwarded not at all.
 */
class PathFormsTest {

    private static final ManualTimeSource TIME = new ManualTimeSource(); // no token comes back during a test

    private static Upstream upstream;
    private static RunningServer server;

    @BeforeAll
    static void start() throws Exception {
        upstream = Upstream.start();
        server = RunningServer.start("""
                policies:
                  burst:
                    limits:
                      - capacity: 5
                        refill: 1 per 10s
                rules:
                  - path: /api/**
                    key: header:X-API-Key
                    policy: burst
                server:
                  upstream: %s
                """.formatted(upstream.uri()), TIME);
    }

    @AfterAll
    static void stop() {
        server.close();
        upstream.close();
    }

    @ParameterizedTest(name = "{0} is limited and forwarded as {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "/api/hello                  | /api/hello",
                "//api/hello                 | /api/hello",
                "/api//hello                 | /api/hello",
                "/API/hello                  | /API/hello",
                "/x/../api/hello             | /api/hello",
                "/api/./hello                | /api/hello",
                "/./api/hello                | /api/hello",
                "/%61pi/hello                | /api/hello",
                "/x/%2e%2e/api/hello         | /api/hello",
                "/x/..;/api/hello            | /api/hello",
                "/api/hello;x=1              | /api/hello",
                "/api/;x/hello               | /api/hello",
                "/api/caf%c3%a9?q=%20        | /api/caf%C3%A9?q=%20",
                "http://other.example/api/hello | /api/hello",
            })
    void aFormOfThePathIsLimitedUnderTheRuleAndForwardedAsTheRuleMatchedIt(String sent, String forwarded)
            throws IOException {
        String key = "client-" + Integer.toHexString(sent.hashCode());
        int before = upstream.received().size();

        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            statuses.add(send(sent, key).status());
        }

        assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429, 429);
        assertThat(upstream.received().subList(before, upstream.received().size()))
                .extracting(Upstream.Received::path)
                .containsExactly(forwarded, forwarded, forwarded, forwarded, forwarded);
    }

    @ParameterizedTest(name = "{0} is refused: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "/api\\hello           | backslash",
                "/api%5Chello          | backslash",
                "/api%2Fhello          | encoded '/'",
                "/api/hello%00         | %00",
                "/api/%zz              | malformed escape",
                "/api/%c0%ae%c0%ae/x   | not UTF-8",
                "/api/h\u00e9llo       | U+00E9",
                "/api/hello#x          | '#'",
                "/../api/hello         | climbs above the root",
            })
    void anAmbiguousFormOfThePathIsRefusedAndNeverForwarded(String sent, String why) throws IOException {
        int before = upstream.received().size();

        RawHttp.Answer answer = send(sent, "refused");

        assertThat(answer.status()).isEqualTo(400);
        assertThat(answer.header("Content-Type")).containsExactly("application/problem+json");
        assertThat(answer.body()).contains(why);
        assertThat(upstream.received()).hasSize(before);
    }

    @Test
    void theSecurityPagesPathSettingsAreTheDefaultsAndEachAlternativeItNamesIsRead() {
        String block = DocumentationExamples.blocks("docs/security.md", "yaml").stream()
                .filter(yaml -> yaml.startsWith("paths:"))
                .findFirst()
                .orElseThrow();
        String alternatives = block.replace("true ", "false")
                .replace("backslash: refuse", "backslash: slash")
                .replace("encoded-slash: refuse", "encoded-slash: keep")
                .replace("parameters: drop", "parameters: keep");

        assertThat(paths(block)).isEqualTo(PathSettings.DEFAULT);
        assertThat(paths(alternatives))
                .isEqualTo(new PathSettings(
                        false,
                        PathSettings.Backslash.SLASH,
                        PathSettings.EncodedSlash.KEEP,
                        PathSettings.Parameters.KEEP));
    }

    private static PathSettings paths(String section) {
        return ServerConfig.parse(section, "tollgate.yaml")
                .responses(InMemoryRateLimiter.create())
                .build()
                .paths();
    }

    private static RawHttp.Answer send(String target, String key) throws IOException {
        return RawHttp.send(
                server.server().port(), "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nX-API-Key: " + key);
    }
}
