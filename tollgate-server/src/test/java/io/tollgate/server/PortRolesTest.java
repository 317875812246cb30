package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.fixtures.ManualTimeSource;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each port serves its role and nothing else unless the file says so by name, and the decision API's keys live
 * apart from the proxy rules' keys: what a client of one door can do to another client's buckets.
 */
class PortRolesTest {

    /** The quick start's file as shipped, on free ports and in front of {@code upstream}. */
    static String quickstart(Upstream upstream) throws Exception {
        return Files.readString(DocumentationExamples.PROJECT.resolve("examples/quickstart.yaml"))
                .replace("http://127.0.0.1:9000", upstream.uri().toString())
                .replace("decision-port: 8082", "decision-port: 0")
                .replace("management-port: 9090", "management-port: 0");
    }

    @Test
    void aClientOfTheQuickStartsProxyCannotChargeAnotherClientsBucket() throws Exception {
        try (Upstream upstream = Upstream.start();
                RunningServer server = RunningServer.start(quickstart(upstream))) {
            // The attack: charge the bucket the rules keep for a client's IP, and for someone's API key
            HttpResponse<String> byIp =
                    server.post("/v1/charge", "{\"policy\":\"per-client\",\"key\":\"ip:127.0.0.1\",\"cost\":100000}");
            HttpResponse<String> byKey = server.post(
                    "/v1/charge", "{\"policy\":\"per-client\",\"key\":\"header:x-api-key:k1\",\"cost\":100000}");

            // Tollgate did not answer them: the public port proxies every path, and the upstream saw both
            assertThat(byIp.headers().firstValue("X-Upstream-Path")).hasValue("/v1/charge");
            assertThat(byKey.headers().firstValue("X-Upstream-Path")).hasValue("/v1/charge");
            assertThat(server.get("/api/hello").statusCode()).isEqualTo(200);
            assertThat(server.get("/api/hello", "X-API-Key", "k1").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void theQuickStartHoldsAnIpToItsCeilingWhateverApiKeysItInvents() throws Exception {
        try (Upstream upstream = Upstream.start();
                RunningServer server = RunningServer.start(quickstart(upstream), new ManualTimeSource())) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                statuses.add(
                        server.get("/api/hello", "X-API-Key", "invented-" + i).statusCode());
            }

            assertThat(statuses.subList(0, 10)).containsOnly(200);
            assertThat(statuses.subList(10, 12)).containsOnly(429);
        }
    }

    @Test
    void thePublicPortOfAProxyForwardsTheServersOwnPathsToTheUpstream() throws Exception {
        try (Upstream upstream = Upstream.start();
                RunningServer server = RunningServer.start(quickstart(upstream))) {
            for (String path : new String[] {"/healthz", "/readyz", "/metrics", "/v1/check"}) {
                HttpResponse<String> answer = path.equals("/v1/check")
                        ? server.post(path, "{\"policy\":\"per-client\",\"key\":\"alice\"}")
                        : server.get(path);

                assertThat(answer.headers().firstValue("X-Upstream-Path"))
                        .as(path)
                        .hasValue(path);
            }
            assertThat(server.management("GET", "/metrics").body()).contains("tollgate_");
        }
    }

    @Test
    void aServiceOnTheDecisionPortCannotSpendAProxiedClientsTokens() throws Exception {
        try (Upstream upstream = Upstream.start();
                RunningServer server = RunningServer.start(quickstart(upstream))) {
            HttpResponse<String> charged = server.decision(
                    "/v1/charge", "{\"policy\":\"per-client\",\"key\":\"header:x-api-key:k1\",\"cost\":3}");
            HttpResponse<String> checked =
                    server.decision("/v1/check", "{\"policy\":\"per-client\",\"key\":\"header:x-api-key:k1\"}");

            assertThat(charged.statusCode()).isEqualTo(200);
            assertThat(checked.body()).contains("\"key\":\"header:x-api-key:k1\"", "\"remaining\":1");
            // the proxied client still has its whole burst of 5
            for (int i = 0; i < 5; i++) {
                assertThat(server.get("/api/hello", "X-API-Key", "k1").statusCode())
                        .isEqualTo(200);
            }
            assertThat(server.get("/api/hello", "X-API-Key", "k1").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aPolicyThatSharesTheRulesKeysLetsAServiceCheckTheBucketItsProxyCharges() throws Exception {
        try (Upstream upstream = Upstream.start();
                RunningServer server = RunningServer.start(quickstart(upstream)
                        .replace(
                                "  management-port: 0",
                                "  management-port: 0\n  decision-api-shares-rule-keys: [per-client]"))) {
            server.get("/api/hello", "X-API-Key", "k1");
            server.get("/api/hello", "X-API-Key", "k1");

            HttpResponse<String> checked =
                    server.decision("/v1/check", "{\"policy\":\"per-client\",\"key\":\"header:x-api-key:k1\"}");

            assertThat(checked.body()).contains("\"remaining\":2");
        }
    }

    @Test
    void theDecisionPortServesTheDecisionApiAlone() throws Exception {
        try (Upstream upstream = Upstream.start();
                RunningServer server = RunningServer.start(quickstart(upstream))) {
            HttpResponse<String> metrics = server.send(java.net.http.HttpRequest.newBuilder(
                            server.server().decisionUri().resolve("/metrics"))
                    .GET()
                    .build());

            assertThat(server.server().decisionUri().getHost()).isEqualTo("127.0.0.1");
            assertThat(metrics.statusCode()).isEqualTo(404);
            assertThat(metrics.body())
                    .contains("No such endpoint on the decision port: /metrics", "/v1/check and /v1/charge");
            assertThat(upstream.received()).isEmpty();
        }
    }

    @Test
    void whatTheFileExposesByNameAnswersOnAProxysPublicPort() throws Exception {
        try (Upstream upstream = Upstream.start()) {
            String file = quickstart(upstream)
                            .replace(
                                    "  management-port: 0",
                                    "  management-port: 0\n  expose-decision-api-publicly: true\n"
                                            + "  expose-health-publicly: true\n  expose-metrics-publicly: true")
                    + "callers:\n  - name: checkout\n    token: s3cret\n    policies: [per-client]\n";
            try (RunningServer server = RunningServer.start(file)) {
                assertThat(server.get("/healthz").statusCode()).isEqualTo(200);
                assertThat(server.get("/metrics").body()).contains("tollgate_");
                assertThat(server.post(
                                        "/v1/check",
                                        "{\"policy\":\"per-client\",\"key\":\"alice\"}",
                                        "Authorization",
                                        "Bearer s3cret")
                                .statusCode())
                        .isEqualTo(200);
                assertThat(server.get("/other").headers().firstValue("X-Upstream-Path"))
                        .hasValue("/other");
                assertThat(upstream.received()).hasSize(1);
            }
            assertThat(TollgateServer.exposed(
                            ServerConfig.parse(file, "t.yaml").listeners().exposure()))
                    .contains(
                            "WARNING",
                            "server.expose-decision-api-publicly",
                            "server.expose-health-publicly",
                            "server.expose-metrics-publicly");
        }
    }

    @Test
    void aDecisionServersPublicPortServesHealthButMetricsOnlyWhereExposed() throws Exception {
        String decisionServer = "policies:\n  per-client:\n    limits:\n      - capacity: 5\n        refill: 1/s\n";
        try (RunningServer plain = RunningServer.start(decisionServer);
                RunningServer exposing =
                        RunningServer.start("server:\n  expose-metrics-publicly: true\n" + decisionServer)) {
            assertThat(plain.get("/healthz").statusCode()).isEqualTo(200);
            assertThat(plain.get("/metrics").statusCode()).isEqualTo(404);
            assertThat(plain.get("/metrics").body()).contains("metrics and the admin API are on the management port");
            assertThat(exposing.get("/metrics").body()).contains("tollgate_");
        }
    }

    @Test
    void settingsThatSayNothingWhereTheyStandAreRefusedByName() {
        String policies = "policies:\n  p:\n    limits:\n      - capacity: 5\n        refill: 1/s\n";

        assertThatThrownBy(() -> ServerConfig.parse("server:\n  decision-port: 8082\n" + policies, "t.yaml"))
                .hasMessageContaining("server.decision-port")
                .hasMessageContaining("applies only beside a proxy");
        assertThatThrownBy(() -> ServerConfig.parse("server:\n  expose-health-publicly: true\n" + policies, "t.yaml"))
                .hasMessageContaining("server.expose-health-publicly")
                .hasMessageContaining("serves the decision API and health already");
        assertThatThrownBy(() -> ServerConfig.parse(
                        "server:\n  upstream: http://127.0.0.1:9\n  decision-api-shares-rule-keys: [q]\n" + policies,
                        "t.yaml"))
                .hasMessageContaining("server.decision-api-shares-rule-keys[0]")
                .hasMessageContaining("unknown policy 'q'");
    }
}
