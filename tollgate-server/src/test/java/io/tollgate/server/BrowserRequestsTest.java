package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.ManualTimeSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a web page could make its visitor's browser send to the server's own endpoints, on a decision server and its
 * management port both bound to this host, as the quick start's are: a page whose name was rebound to 127.0.0.1,
 * a form or text posted from another site, a request that another origin's script makes.
 */
class BrowserRequestsTest {

    private static RunningServer server;

    @BeforeAll
    static void start() throws Exception {
        server = RunningServer.start("""
                server:
                  host: 127.0.0.1
                  management-port: 0
                  allowed-hosts: [tollgate.local]
                policies:
                  per-client:
                    limits:
                      - capacity: 100
                        refill: 100/s
                """, new ManualTimeSource());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"evil.example", "evil.example:9090", "127.0.0.1.evil.example"})
    void aHostThatDoesNotNameThisHostIsRefusedOnBothPorts(String host) throws IOException {
        RawHttp.Answer admin = RawHttp.send(managementPort(), "GET /admin/policies HTTP/1.1\r\nHost: " + host);
        RawHttp.Answer check = RawHttp.send(publicPort(), check(host, "application/json", null), body());

        assertThat(admin.status()).isEqualTo(403);
        assertThat(admin.body()).contains("does not name this host");
        assertThat(check.status()).isEqualTo(403);
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "localhost", "api.localhost", "[::1]", "tollgate.local"})
    void aHostThatNamesThisHostIsServed(String host) throws IOException {
        RawHttp.Answer admin = RawHttp.send(
                managementPort(), "GET /admin/policies HTTP/1.1\r\nHost: " + host + ":" + managementPort());
        RawHttp.Answer check =
                RawHttp.send(publicPort(), check(host + ":" + publicPort(), "application/json", null), body());

        assertThat(admin.status()).isEqualTo(200);
        assertThat(check.status()).isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""})
    void aDecisionThatIsNotDeclaredJsonIs415(String type) throws IOException {
        RawHttp.Answer answer =
                RawHttp.send(publicPort(), check("127.0.0.1", type.isEmpty() ? null : type, null), body());

        assertThat(answer.status()).isEqualTo(415);
        assertThat(answer.body()).contains("The decision API reads JSON: send Content-Type: application/json");
    }

    @Test
    void aDecisionDeclaredJsonWithACharsetIsServed() throws IOException {
        RawHttp.Answer answer =
                RawHttp.send(publicPort(), check("127.0.0.1", "application/json; charset=utf-8", null), body());

        assertThat(answer.status()).isEqualTo(200);
    }

    @Test
    void aChangeFromAPageOfAnotherOriginIsRefusedAndFromTheServersOwnServed() throws IOException {
        String own = "http://127.0.0.1:" + managementPort();

        RawHttp.Answer foreignCheck = RawHttp.send(
                publicPort(), check("127.0.0.1:" + publicPort(), "application/json", "https://evil.example"), body());
        RawHttp.Answer foreignReset = RawHttp.send(
                managementPort(),
                "DELETE /admin/buckets/per-client/alice HTTP/1.1\r\nHost: 127.0.0.1:" + managementPort()
                        + "\r\nOrigin: https://evil.example");
        RawHttp.Answer crossSite = RawHttp.send(
                managementPort(),
                "POST /admin/reload HTTP/1.1\r\nHost: 127.0.0.1:" + managementPort()
                        + "\r\nSec-Fetch-Site: cross-site");
        RawHttp.Answer ownReset = RawHttp.send(
                managementPort(),
                "DELETE /admin/buckets/per-client/alice HTTP/1.1\r\nHost: 127.0.0.1:" + managementPort()
                        + "\r\nOrigin: " + own);

        assertThat(foreignCheck.status()).isEqualTo(403);
        assertThat(foreignCheck.body()).contains("another origin (https://evil.example)");
        assertThat(foreignReset.status()).isEqualTo(403);
        assertThat(crossSite.status()).isEqualTo(403);
        assertThat(ownReset.status()).isBetween(200, 204);
    }

    private static String check(String host, String type, String origin) {
        return "POST /v1/check HTTP/1.1\r\nHost: " + host + (type == null ? "" : "\r\nContent-Type: " + type)
                + (origin == null ? "" : "\r\nOrigin: " + origin) + "\r\nContent-Length: " + body().length;
    }

    private static byte[] body() {
        return "{\"policy\":\"per-client\",\"key\":\"alice\"}".getBytes(StandardCharsets.UTF_8);
    }

    private static int publicPort() {
        return server.server().port();
    }

    private static int managementPort() {
        return server.server().managementUri().getPort();
    }
}
