package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.fixtures.DocumentationExamples;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A port that can change another client's buckets (the management port's resets and reloads, Envoy's hits) binds
 * this host only, or asks its callers who they are; a file that opens one wider without that stops the start,
 * unless a setting whose name says so allows it, and then every start warns.
 */
class UnauthenticatedPortsTest {

    private static final String ENVOY_FILES =
            DocumentationExamples.PROJECT.resolve("examples/envoy/ratelimit").toString();

    @TempDir
    Path dir;

    @Test
    void aManagementPortBeyondThisHostWithoutATokenStopsTheStartNamingTheWaysOut() {
        assertThatThrownBy(() ->
                        ServerConfig.parse("server:\n  management-port: 0\n  management-host: 0.0.0.0\n", "t.yaml"))
                .hasMessage("t.yaml:3: server.management-host: binds 0.0.0.0 without server.management-token, so"
                        + " anyone who reaches the port can reset buckets and reload the configuration: set a token,"
                        + " bind 127.0.0.1, or set server.management-allow-unauthenticated: true");
    }

    @Test
    void aManagementPortBeyondThisHostWithATokenOrOnLoopbackStarts() {
        ServerConfig withToken = ServerConfig.parse(
                "server:\n  management-port: 0\n  management-host: 0.0.0.0\n  management-token: s3cret\n", "t.yaml");
        ServerConfig loopback = ServerConfig.parse("server:\n  management-port: 0\n  management-host: ::1\n", "t.yaml");

        assertThat(withToken.management().unauthenticated()).isFalse();
        assertThat(loopback.management().unauthenticated()).isFalse();
    }

    @Test
    void aManagementPortOpenedOnPurposeStartsAndEveryStartWarns() throws Exception {
        String file = """
                server:
                  port: 0
                  management-port: 0
                  management-host: 0.0.0.0
                  management-allow-unauthenticated: true
                """;
        try (RunningServer server = RunningServer.start(file)) {
            assertThat(server.management("GET", "/healthz").statusCode()).isEqualTo(200);
        }

        assertThat(OpenPorts.warnings(ServerConfig.parse(file, "t.yaml"), "http://0.0.0.0:9090", null))
                .containsExactly("tollgate: server.management-allow-unauthenticated is on: anyone who reaches"
                        + " http://0.0.0.0:9090 may reset buckets and reload the configuration; set"
                        + " server.management-token");
    }

    @Test
    void envoysPortBindsThisHostUnlessTheFileSays() {
        ServerConfig config = ServerConfig.parse("envoy:\n  port: 0\n  config: " + ENVOY_FILES + "\n", "t.yaml");

        assertThat(config.envoy().host()).isEqualTo("127.0.0.1");
        assertThat(OpenPorts.envoyUnauthenticated(config)).isFalse();
    }

    @Test
    void envoysPortBeyondThisHostWithoutClientCertificatesStopsTheStart() {
        assertThatThrownBy(() -> ServerConfig.parse(
                        "envoy:\n  port: 0\n  host: 0.0.0.0\n  config: " + ENVOY_FILES + "\n", "t.yaml"))
                .hasMessage("t.yaml:3: envoy.host: binds 0.0.0.0, so anyone who reaches the port can spend any"
                        + " client's buckets: name callers, require client certificates (envoy.tls with client-ca),"
                        + " bind 127.0.0.1, or set envoy.allow-unauthenticated-callers: true");
    }

    @Test
    void envoysPortBeyondThisHostThatRequiresClientCertificatesStarts() throws Exception {
        TestCertificates.Authority authority = TestCertificates.authority("Tollgate Tests CA");
        TestCertificates.Pem server = authority.server().pem(dir, "server");
        Path clientCa = authority.pem(dir.resolve("ca.crt"));

        ServerConfig config = ServerConfig.parse(
                "envoy:\n  port: 0\n  host: 0.0.0.0\n  config: " + ENVOY_FILES + "\n  tls:\n    certificate: "
                        + server.certificate() + "\n    private-key: " + server.key() + "\n    client-ca: " + clientCa
                        + "\n",
                "t.yaml");

        assertThat(OpenPorts.envoyUnauthenticated(config)).isFalse();
    }

    @Test
    void envoysPortBeyondThisHostThatNamesItsCallersStarts() {
        ServerConfig config = ServerConfig.parse(
                "envoy:\n  port: 0\n  host: 0.0.0.0\n  config: " + ENVOY_FILES + "\npolicies:\n  p:\n    limits:\n"
                        + "      - {capacity: 5, refill: 1/s}\ncallers:\n  - name: edge\n    token: s3cret\n"
                        + "    policies: [p]\n",
                "t.yaml");

        assertThat(OpenPorts.envoyUnauthenticated(config)).isFalse();
    }

    @Test
    void aDecisionServerBindsThisHostUnlessTheFileSaysAndBeyondItNeedsCallers() {
        ServerConfig plain = ServerConfig.parse("server:\n  port: 0\n", "t.yaml");
        ServerConfig withCallers = ServerConfig.parse(
                "server:\n  host: 0.0.0.0\npolicies:\n  p:\n    limits:\n      - {capacity: 5, refill: 1/s}\n"
                        + "callers:\n  - name: billing\n    token: s3cret\n    policies: [p]\n",
                "t.yaml");

        assertThat(plain.host()).isEqualTo("127.0.0.1");
        assertThat(OpenPorts.warnings(withCallers, null, null)).isEmpty();
        assertThatThrownBy(() -> ServerConfig.parse("server:\n  host: 0.0.0.0\n", "t.yaml"))
                .hasMessage("t.yaml:2: server.host: binds 0.0.0.0 and serves the decision API, so anyone who reaches"
                        + " the port can spend any client's buckets: name callers, require client certificates, bind"
                        + " 127.0.0.1, or set server.allow-unauthenticated-decisions: true");
        assertThatThrownBy(() -> ServerConfig.parse(
                        "server:\n  upstream: http://127.0.0.1:9000\n  decision-port: 0\n  decision-host: 0.0.0.0\n",
                        "t.yaml"))
                .hasMessageStartingWith("t.yaml:4: server.decision-host: binds 0.0.0.0 and serves the decision API");
    }

    @Test
    void aDecisionServerOpenedOnPurposeStartsAndEveryStartWarns() throws Exception {
        String file = "server:\n  host: 0.0.0.0\n  port: 0\n  allow-unauthenticated-decisions: true\n";
        try (RunningServer server = RunningServer.start(file)) {
            assertThat(server.get("/healthz").statusCode()).isEqualTo(200);
        }

        assertThat(OpenPorts.warnings(ServerConfig.parse(file, "t.yaml"), null, null))
                .containsExactly("tollgate: server.allow-unauthenticated-decisions is on: anyone who reaches 0.0.0.0:0"
                        + " may spend any client's buckets; name callers");
    }

    @Test
    void theDecisionApiOnAProxysPublicPortNeedsCallers() {
        assertThatThrownBy(() -> ServerConfig.parse(
                        "server:\n  upstream: http://127.0.0.1:9000\n  expose-decision-api-publicly: true\n", "t.yaml"))
                .hasMessage("t.yaml:3: server.expose-decision-api-publicly: serves the decision API to every client of"
                        + " the proxy, so it needs callers: name them, with their tokens or certificates, in callers");
    }

    @Test
    void envoysPortOpenedOnPurposeStartsAndEveryStartWarns() throws Exception {
        String file = "envoy:\n  port: 0\n  host: 0.0.0.0\n  allow-unauthenticated-callers: true\n  config: "
                + ENVOY_FILES + "\nserver:\n  port: 0\n";
        try (RunningServer server = RunningServer.start(file)) {
            assertThat(server.server().envoyAddress()).startsWith("0.0.0.0:");
        }

        assertThat(OpenPorts.warnings(ServerConfig.parse(file, "t.yaml"), null, "0.0.0.0:8081"))
                .containsExactly("tollgate: envoy.allow-unauthenticated-callers is on: anyone who reaches 0.0.0.0:8081"
                        + " may spend any client's buckets; require client certificates with envoy.tls");
    }
}
