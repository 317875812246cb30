package io.tollgate.server;

import static io.tollgate.server.DecisionApiTest.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.fixtures.ManualTimeSource;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The management port: health, metrics and the admin API on a listener of their own, behind an optional
 * bearer token; the public port serves the proxy, or the decision API and health, and no admin API.
 */
class ManagementPortTest {

    private static final String POLICIES = """
            policies:
              per-client:
                limits:
                  - capacity: 5
                    refill: 1/h
              layered:
                limits:
                  - capacity: 10
                    refill: 1/h
                  - capacity: 3
                    refill: 1/h
            """;

    private static Upstream upstream;
    private final List<RunningServer> servers = new ArrayList<>();

    @BeforeAll
    static void startUpstream() throws Exception {
        upstream = Upstream.start();
    }

    @AfterAll
    static void stopUpstream() {
        upstream.close();
    }

    @AfterEach
    void stopServers() {
        servers.forEach(RunningServer::close);
    }

    private RunningServer start(String yaml) throws Exception {
        RunningServer server = RunningServer.start(yaml, new ManualTimeSource());
        servers.add(server);
        return server;
    }

    private RunningServer decisionApi(String management) throws Exception {
        return start("server:\n" + management + POLICIES);
    }

    @Test
    void healthMetricsAndTheAdminApiAnswerOnTheManagementPort() throws Exception {
        RunningServer server = decisionApi("  management-port: 0\n");

        assertThat(server.management("GET", "/healthz").body()).isEqualTo("{\"status\":\"up\"}");
        assertThat(server.management("GET", "/readyz").statusCode()).isEqualTo(200);
        assertThat(server.management("GET", "/metrics").body()).contains("tollgate_server_requests_seconds");
        assertThat(server.management("GET", "/admin/policies").statusCode()).isEqualTo(200);
        assertThat(server.server().managementUri().getHost()).isEqualTo("127.0.0.1");
        assertThat(server.server().managementUri().getPort())
                .isNotEqualTo(server.server().port());
    }

    @Test
    void aDecisionServersPublicPortServesTheDecisionApiAndHealthAlone() throws Exception {
        RunningServer server = decisionApi("  management-port: 0\n");

        HttpResponse<String> check = server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"alice\"}");

        assertThat(check.statusCode()).isEqualTo(200);
        assertThat(server.get("/healthz").statusCode()).isEqualTo(200);
        assertThat(server.get("/readyz").statusCode()).isEqualTo(200);
        for (String path : List.of("/metrics", "/admin/policies")) {
            assertProblem(
                    server.get(path),
                    404,
                    "No such endpoint: " + path + ". This server has no upstream; its endpoints are /v1/check,"
                            + " /v1/charge, /healthz, /readyz; metrics and the admin API are on the management port"
                            + " (server.management-port).");
        }
    }

    @Test
    void withAManagementPortThePublicPortForwardsEveryPathToTheUpstream() throws Exception {
        RunningServer server = start("""
                server:
                  upstream: %s
                  management-port: 0
                """.formatted(upstream.uri()) + POLICIES);

        for (String path : List.of("/metrics", "/healthz", "/readyz", "/v1/check", "/admin/policies")) {
            HttpResponse<String> response = server.get(path);

            assertThat(response.statusCode()).as(path).isEqualTo(200);
            assertThat(response.headers().firstValue("X-Upstream-Path"))
                    .as(path)
                    .hasValue(path);
        }
    }

    @Test
    void withoutAManagementPortTheAdminApiAndMetricsAreOffAndHealthStaysPublic() throws Exception {
        RunningServer server = decisionApi("  port: 0\n");

        assertThat(server.server().managementUri()).isNull();
        assertThat(server.get("/healthz").statusCode()).isEqualTo(200);
        assertThat(server.get("/metrics").statusCode()).isEqualTo(404);
        assertThat(server.get("/admin/policies").statusCode()).isEqualTo(404);
        assertThat(server.get("/admin/buckets/per-client/alice").statusCode()).isEqualTo(404);
    }

    @Test
    void aTokenIsRequiredOnEveryManagementPathWhenOneIsSet() throws Exception {
        RunningServer server = decisionApi("  management-port: 0\n  management-token: s3cret-Token\n");

        for (String path : List.of("/healthz", "/metrics", "/admin/policies", "/admin/buckets/per-client/alice")) {
            HttpResponse<String> missing = server.management("GET", path);
            HttpResponse<String> wrong = server.management("GET", path, "Authorization", "Bearer s3cret-token");
            HttpResponse<String> right = server.management("GET", path, "Authorization", "Bearer s3cret-Token");

            assertProblem(
                    missing,
                    401,
                    "The management port needs the bearer token of server.management-token: send Authorization:"
                            + " Bearer TOKEN.");
            assertThat(missing.headers().firstValue("WWW-Authenticate"))
                    .hasValue("Bearer realm=\"tollgate management\"");
            assertThat(wrong.statusCode()).as(path).isEqualTo(401);
            assertThat(right.statusCode()).as(path).isEqualTo(200);
        }
    }

    @Test
    void thePoliciesAreTheRunningConfigurationInItsOwnVocabulary() throws Exception {
        RunningServer server = start("""
                server:
                  upstream: %s
                  management-port: 0
                rules:
                  - path: /api/**
                    methods: [GET]
                    key: header:X-API-Key
                    policy: per-client
                """.formatted(upstream.uri()) + POLICIES);

        HttpResponse<String> policies = server.management("GET", "/admin/policies");

        assertThat(policies.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(policies.body())
                .isEqualTo("{\"store\":\"memory\",\"upstream\":\"" + upstream.uri() + "\",\"policies\":{"
                        + "\"layered\":{\"limits\":[{\"capacity\":10,\"refill\":\"1/h\",\"initial-tokens\":10},"
                        + "{\"capacity\":3,\"refill\":\"1/h\",\"initial-tokens\":3}]},"
                        + "\"per-client\":{\"limits\":[{\"capacity\":5,\"refill\":\"1/h\",\"initial-tokens\":5}]}},"
                        + "\"rules\":[{\"path\":\"/api/**\",\"methods\":[\"GET\"],\"key\":\"header:X-API-Key\","
                        + "\"policy\":\"per-client\",\"cost\":1,\"dry-run\":false}]}");
    }

    @Test
    void aBucketIsInspectedWithoutTakingAndResetToFull() throws Exception {
        RunningServer server = decisionApi("  management-port: 0\n");
        for (int i = 0; i < 3; i++) {
            server.post("/v1/check", "{\"policy\": \"layered\", \"key\": \"alice\"}");
        }

        // the decision API keeps its keys apart from the proxy rules': under api:
        HttpResponse<String> emptied = server.management("GET", "/admin/buckets/layered/api:alice");
        HttpResponse<String> again = server.management("GET", "/admin/buckets/layered/api:alice");
        HttpResponse<String> reset = server.management("DELETE", "/admin/buckets/layered/api:alice");
        HttpResponse<String> full = server.management("GET", "/admin/buckets/layered/api:alice");

        assertThat(emptied.body())
                .isEqualTo("{\"policy\":\"layered\",\"key\":\"api:alice\",\"stored\":true,\"remaining\":0,"
                        + "\"retry_after_ms\":3600000,"
                        + "\"reset_after_ms\":10800000,\"limits\":["
                        + "{\"limit\":10,\"refill\":\"1/h\",\"remaining\":7,\"retry_after_ms\":0,"
                        + "\"reset_after_ms\":10800000},"
                        + "{\"limit\":3,\"refill\":\"1/h\",\"remaining\":0,\"retry_after_ms\":3600000,"
                        + "\"reset_after_ms\":10800000}]}");
        assertThat(again.body()).isEqualTo(emptied.body());
        assertThat(reset.statusCode()).isEqualTo(204);
        assertThat(full.body())
                .contains("\"stored\":false")
                .contains("\"remaining\":3,\"retry_after_ms\":0,\"reset_after_ms\":0");
        assertThat(server.post("/v1/check", "{\"policy\": \"layered\", \"key\": \"alice\"}")
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void theKeyInThePathIsPercentEncoded() throws Exception {
        RunningServer server = decisionApi("  management-port: 0\n");
        server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"2001:db8::1/a b+c\"}");

        HttpResponse<String> state =
                server.management("GET", "/admin/buckets/per-client/api%3A2001%3Adb8%3A%3A1%2Fa%20b+c");

        assertThat(state.body())
                .startsWith("{\"policy\":\"per-client\",\"key\":\"api:2001:db8::1/a b+c\",\"stored\":true,"
                        + "\"remaining\":4,");
    }

    @Test
    void theKeyInThePathIsDecodedOnceSoAPercentSignInAKeyIsReached() throws Exception {
        RunningServer server = decisionApi("  management-port: 0\n");
        server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"50%2Foff\"}");

        HttpResponse<String> state = server.management("GET", "/admin/buckets/per-client/api:50%252Foff");
        HttpResponse<String> reset = server.management("DELETE", "/admin/buckets/per-client/api:50%252Foff");
        HttpResponse<String> after = server.management("GET", "/admin/buckets/per-client/api:50%252Foff");

        assertThat(state.body()).startsWith("{\"policy\":\"per-client\",\"key\":\"api:50%2Foff\",\"stored\":true,");
        assertThat(reset.statusCode()).isEqualTo(204);
        assertThat(after.body()).startsWith("{\"policy\":\"per-client\",\"key\":\"api:50%2Foff\",\"stored\":false,");
    }

    @Test
    void aKeyTheStoreDoesNotHoldIsShownFullAndSaidNotStored() throws Exception {
        RunningServer server = decisionApi("  management-port: 0\n");
        server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"alice\"}");

        HttpResponse<String> mistyped = server.management("GET", "/admin/buckets/per-client/api:alcie");
        HttpResponse<String> used = server.management("GET", "/admin/buckets/per-client/api:alice");

        assertThat(mistyped.statusCode()).isEqualTo(200);
        assertThat(mistyped.body()).startsWith("{\"policy\":\"per-client\",\"key\":\"api:alcie\",\"stored\":false,");
        assertThat(used.body()).startsWith("{\"policy\":\"per-client\",\"key\":\"api:alice\",\"stored\":true,");
    }

    @Test
    void badAdminRequestsGetProblems() throws Exception {
        RunningServer server = decisionApi("  management-port: 0\n");

        assertProblem(
                server.management("GET", "/admin/buckets/per-clent/alice"),
                404,
                "unknown policy 'per-clent'; defined: layered, per-client");
        assertProblem(
                server.management("GET", "/admin/buckets/per-client"),
                400,
                "The path must be /admin/buckets/{policy}/{key}, with the key percent-encoded.");
        assertProblem(
                server.management("GET", "/admin/buckets/per-client/" + "k".repeat(1025)),
                400,
                "The key is longer than 1024 characters.");
        assertThat(RawHttp.send(
                                server.server().managementUri().getPort(),
                                "GET /admin/buckets/per-client/%zz HTTP/1.1\r\nHost: localhost")
                        .status())
                .isEqualTo(400);
        assertThat(server.management("POST", "/admin/buckets/per-client/alice").statusCode())
                .isEqualTo(405);
        assertThat(server.management("DELETE", "/admin/policies").statusCode()).isEqualTo(405);
        assertProblem(
                server.management("GET", "/v1/check"),
                404,
                "No such endpoint on the management port: /v1/check. Its endpoints are / (the live page), /healthz,"
                        + " /readyz, /metrics, /admin/policies, /admin/reload, /admin/top, /admin/rates, /admin/store"
                        + " and /admin/buckets/{policy}/{key}.");
    }

    @Test
    void aTokenThatDiffersOnlyInCaseIsRefusedOnAKeptAliveConnection() throws Exception {
        RunningServer server = decisionApi("  management-port: 0\n  management-token: s3cret-Token\n");

        HttpResponse<String> right = server.management("GET", "/healthz", "Authorization", "Bearer s3cret-Token");
        HttpResponse<String> otherCase = server.management("GET", "/healthz", "Authorization", "Bearer s3cret-token");
        HttpResponse<String> rightAgain = server.management("GET", "/healthz", "Authorization", "Bearer s3cret-Token");

        assertThat(List.of(right.statusCode(), otherCase.statusCode(), rightAgain.statusCode()))
                .containsExactly(200, 401, 200);
    }

    @Test
    void theManagementSettingsAreChecked() {
        assertThatThrownBy(() -> ServerConfig.parse("server:\n  management-token: abc\n", "t.yaml"))
                .hasMessage("t.yaml:2: server.management-token: applies only with server.management-port");
        assertThatThrownBy(() -> ServerConfig.parse("server:\n  management-host: 0.0.0.0\n", "t.yaml"))
                .hasMessage("t.yaml:2: server.management-host: applies only with server.management-port");
        assertThatThrownBy(() -> ServerConfig.parse("server:\n  management-port: 70000\n", "t.yaml"))
                .hasMessage("t.yaml:2: server.management-port: port must be 0 to 65535, was 70000");
        assertThatThrownBy(() ->
                        ServerConfig.parse("server:\n  management-port: 0\n  management-token: \"a b\"\n", "t.yaml"))
                .hasMessage("t.yaml:3: server.management-token: must be printable ASCII without spaces, as a bearer"
                        + " token is sent");
    }
}
