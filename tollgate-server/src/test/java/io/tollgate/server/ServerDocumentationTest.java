package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.FailurePolicy;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.internal.store.MemoryStoreProvider;
import io.tollgate.redis.internal.RedisSettings;
import io.tollgate.redis.internal.store.RedisStoreProvider;
import io.tollgate.testing.RedisExtension;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Keeps docs/server.md, the README's quick start and examples/quickstart.yaml true: every configuration
 * they show is read, the usage is what the server prints, and the example exchanges are replayed against
 * a running server, which must answer exactly as shown.
 */
class ServerDocumentationTest {

    private static final String PAGE = "docs/server.md";

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @Test
    void everyConfigurationShownIsValid() throws Exception {
        List<String> files = DocumentationExamples.blocks(PAGE, "yaml");
        String quickstart = Files.readString(DocumentationExamples.PROJECT.resolve("examples/quickstart.yaml"));

        assertThat(files).isNotEmpty();
        for (String file : files) {
            // a secret's source is read where the server runs: here each stands for a token of its own
            String withSecrets = file.replaceAll("\\{(env|file): [^}]+}", "a-secret-token-$1");
            assertThat(ServerConfig.parse(withSecrets, PAGE).policies()).isNotEmpty();
        }
        assertThat(ServerConfig.parse(quickstart, "quickstart.yaml").rules()).hasSize(2);
    }

    @Test
    void theConfigurationPagesWholeFileIsReadAsItIsAndEveryKeyInItsTablesIsInTheFile() throws Exception {
        String page = "docs/configuration.md";
        // the page's relative envoy.config, as the server would find it when run from the repository's root
        String file = DocumentationExamples.blocks(page, "yaml")
                .get(0)
                .replace(
                        "config: ratelimit/",
                        "config: " + DocumentationExamples.PROJECT.resolve("examples/envoy/ratelimit"));

        ServerConfig config = ServerConfig.parse(file, page);

        assertThat(config.rules()).hasSize(2);
        assertThat(config.rules().get(1).inFlight().maxInFlight()).isEqualTo(5);
        assertThat(config.upstream()).hasToString("http://127.0.0.1:9000");
        assertThat(config.envoy().port()).isEqualTo(8081);
        assertThat(((RedisStoreProvider.Settings) config.store()).redis().expectedInstances())
                .isEqualTo(3);
        Matcher key = Pattern.compile("(?m)^\\| `(?:tollgate\\.)?([a-z0-9-]+(?:\\.[A-Za-z0-9-]+)*)")
                .matcher(Files.readString(DocumentationExamples.PROJECT.resolve(page)));
        List<String> keys = new ArrayList<>();
        while (key.find()) {
            keys.add(key.group(1));
        }
        assertThat(keys).hasSizeGreaterThan(30);
        assertThat(ServerConfig.parse(DocumentationExamples.blocks(page, "yaml").get(1), page)
                        .store())
                .isEqualTo(new MemoryStoreProvider.Settings(100_000));
        assertThat(ServerConfig.parse(
                                file.replace("uri: redis://127.0.0.1:6379", "cluster-uris: [redis://127.0.0.1:7000]"),
                                page)
                        .store())
                .isEqualTo(new RedisStoreProvider.Settings(new RedisSettings(
                        null,
                        List.of("redis://127.0.0.1:7000"),
                        Duration.ofMillis(50),
                        "tollgate:",
                        FailurePolicy.LOCAL,
                        3,
                        true,
                        false,
                        Duration.ofSeconds(5),
                        List.of("per-client"),
                        null,
                        null)));
        for (String each : keys) {
            String last = each.substring(each.lastIndexOf('.') + 1);
            // the starter's own keys, the alternatives to redis.uri and to redis, read below, and the settings
            // that name files and secrets, which the page shows in examples of their own
            boolean elsewhere = Set.of(
                            "enabled",
                            "order",
                            "url-patterns",
                            "warm-up",
                            "gateway-headers",
                            "use-application-redis",
                            "store",
                            "cluster-uris",
                            "maximum-keys",
                            "username",
                            "password",
                            "tls",
                            "certificate",
                            "private-key",
                            "client-ca",
                            "client-auth")
                    .contains(last);
            assertThat(elsewhere || file.contains(last + ":"))
                    .as("%s of the tables is in the whole file", each)
                    .isTrue();
        }
    }

    @Test
    void everyTollgateMeterOnMetricsSaysWhatItCountsAndIsInTheMetersTable() throws Exception {
        String table = Files.readString(DocumentationExamples.PROJECT.resolve(PAGE));
        try (RunningServer server = RunningServer.start("""
                server:
                  management-port: 0
                policies:
                  per-client:
                    limits:
                      - capacity: 1
                        refill: 1/h
                """)) {
            server.post("/v1/check", "{\"policy\":\"per-client\",\"key\":\"alice\"}");
            server.post("/v1/check", "{\"policy\":\"per-client\",\"key\":\"alice\"}");
            server.post("/v1/charge", "{\"policy\":\"per-client\",\"key\":\"bob\",\"cost\":1}");

            String scraped = server.management("GET", "/metrics").body();

            Matcher help = Pattern.compile("(?m)^# HELP (tollgate_\\w+) ?(.*)$").matcher(scraped);
            List<String> families = new ArrayList<>();
            while (help.find()) {
                String family = help.group(1).replaceAll("_total$", "");
                families.add(family);
                assertThat(help.group(2)).as("the HELP text of %s", family).isNotBlank();
                assertThat(table)
                        .as("%s in the meters table of %s", family, PAGE)
                        .contains("`" + family);
            }
            assertThat(families).contains("tollgate_decisions", "tollgate_api_decisions", "tollgate_api_charges");
        }
    }

    @Test
    void theUsageShownIsWhatTheServerPrints() {
        String usage = DocumentationExamples.blocks(PAGE, "text").stream()
                .filter(block -> block.startsWith("Usage:"))
                .findFirst()
                .orElseThrow();

        assertThat(usage).isEqualTo(Main.USAGE);
    }

    @Test
    void theExampleExchangesAreWhatTheServerAnswers() throws Exception {
        String config = DocumentationExamples.blocks(PAGE, "yaml")
                .get(0)
                .replace("redis://127.0.0.1:6379", redis.server().uri())
                .replace("decision-port: 8082", "decision-port: 0");
        List<String> exchanges = DocumentationExamples.blocks(PAGE, "http");
        assertThat(exchanges).hasSize(8);
        try (Upstream upstream = Upstream.start();
                RunningServer server = RunningServer.start(
                        config.replace("http://127.0.0.1:9000", upstream.uri().toString()), new ManualTimeSource())) {

            assertAnswers(server.send(request(server, exchanges.get(0))), exchanges.get(1));
            HttpResponse<String> last = null;
            for (int i = 0; i < 10; i++) {
                last = server.send(request(server, exchanges.get(0)));
            }
            assertAnswers(last, exchanges.get(2));
            assertAnswers(server.send(request(server, exchanges.get(3))), exchanges.get(4));
            assertAnswers(
                    server.decision("/v1/check", "{\"policy\": \"per-user\", \"key\": \"alice\"}"), exchanges.get(5));
            assertAnswers(server.send(request(server, exchanges.get(6))), exchanges.get(7));
            assertThat(server.decision("/v1/check", "{\"policy\": \"per-client\", \"key\": \"carol\"}")
                            .body())
                    .as("the check after the charge, as the page says")
                    .contains("\"allowed\":false", "\"retry_after_ms\":2200");
        }
    }

    @Test
    void theSecurityPagesCallersAnswerAsShown() throws Exception {
        String page = "docs/security.md";
        String config = DocumentationExamples.blocks(page, "yaml")
                .get(0)
                .replace("port: 8080", "port: 0")
                .replace("management-port: 9090", "management-port: 0")
                // the secrets' sources, read where the server runs: here the tokens the exchanges send
                .replace("{file: /run/secrets/tollgate/checkout-token}", "CHECKOUT-TOKEN")
                .replace("{env: BILLING_TOKEN}", "BILLING-TOKEN");
        List<String> exchanges = DocumentationExamples.blocks(page, "http");
        assertThat(exchanges).hasSize(6);
        try (RunningServer server = RunningServer.start(config, new ManualTimeSource())) {
            for (int i = 0; i < exchanges.size(); i += 2) {
                assertAnswers(server.send(request(server, exchanges.get(i))), exchanges.get(i + 1));
            }
            assertThat(server.post(
                                    "/v1/check",
                                    "{\"policy\": \"per-user\", \"key\": \"checkout:alice\"}",
                                    "Authorization",
                                    "Bearer CHECKOUT-TOKEN")
                            .body())
                    .as("neither refused call took anything")
                    .contains("\"remaining\":98");
        }
    }

    @Test
    void theManagementPortExampleAnswersAsShown() throws Exception {
        String config = DocumentationExamples.blocks(PAGE, "yaml").stream()
                .filter(block -> block.contains("management-port: 9090"))
                .findFirst()
                .orElseThrow()
                .replace("management-port: 9090", "management-port: 0");
        List<String> commands = DocumentationExamples.blocks(PAGE, "sh").stream()
                .filter(block -> block.contains("/admin/buckets/"))
                .toList();
        String shownState = DocumentationExamples.blocks(PAGE, "json").get(0);
        try (RunningServer server = RunningServer.start(config, new ManualTimeSource())) {
            for (int i = 0; i < 3; i++) {
                server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"alice\"}");
            }

            HttpResponse<String> state =
                    server.management("GET", path(commands.get(0)), "Authorization", "Bearer change-me");
            HttpResponse<String> reset =
                    server.management("DELETE", path(commands.get(1)), "Authorization", "Bearer change-me");

            assertThat(commands.get(0)).startsWith("curl -s -H 'Authorization: Bearer change-me' localhost:9090/");
            assertThat(commands.get(1)).contains("-X DELETE");
            assertThat(state.body()).isEqualTo(shownState.strip());
            assertThat(reset.statusCode()).isEqualTo(204);
            assertThat(server.management(
                                    "GET", "/admin/buckets/per-client/api:alice", "Authorization", "Bearer change-me")
                            .body())
                    .startsWith("{\"policy\":\"per-client\",\"key\":\"api:alice\",\"stored\":false,\"remaining\":10,");
        }
    }

    @Test
    void theTiersExampleChargesEachCustomerItsPlan() throws Exception {
        String config = DocumentationExamples.blocks(PAGE, "yaml").stream()
                .filter(block -> block.contains("policy-from:"))
                .findFirst()
                .orElseThrow();
        try (Upstream upstream = Upstream.start();
                RunningServer server = RunningServer.start(
                        config.replace("http://127.0.0.1:9000", upstream.uri().toString()), new ManualTimeSource())) {

            HttpResponse<String> gold = server.get("/api/x", "X-API-Key", "k-1", "X-Plan", "gold");
            HttpResponse<String> free = server.get("/api/x", "X-API-Key", "k-1");
            HttpResponse<String> unknownPlan = server.get("/api/x", "X-API-Key", "k-1", "X-Plan", "diamond");
            HttpResponse<String> partner = server.get("/api/x", "X-API-Key", "k-partner", "X-Plan", "gold");
            HttpResponse<String> monitor = server.get("/api/x", "X-API-Key", "k-monitor");
            HttpResponse<String> denied = server.get("/api/x", "X-API-Key", "k-2", "X-Forwarded-For", "198.51.100.7");

            assertThat(gold.headers().firstValue("RateLimit-Policy")).hasValue("\"gold\";q=6000;w=60");
            assertThat(gold.headers().firstValue("RateLimit")).hasValue("\"gold\";r=5999;t=1");
            assertThat(free.headers().firstValue("RateLimit")).hasValue("\"free\";r=59;t=1");
            assertThat(unknownPlan.headers().firstValue("RateLimit")).hasValue("\"free\";r=58;t=2");
            assertThat(partner.headers().firstValue("RateLimit-Policy")).hasValue("\"internal\";q=60000;w=60");
            assertThat(monitor.statusCode()).isEqualTo(200);
            assertThat(monitor.headers().firstValue("RateLimit")).isEmpty();
            assertThat(denied.statusCode())
                    .as("the peer is loopback: no trusted proxy, so its own address counts")
                    .isEqualTo(200);
        }
    }

    /** The path of the one URL in a curl command. */
    private static String path(String command) {
        return command.strip().replaceAll(".*localhost:\\d+", "");
    }

    @Test
    void theReadmeQuickStartReachesA429() throws Exception {
        try (Upstream upstream = Upstream.start();
                RunningServer server = RunningServer.start(PortRolesTest.quickstart(upstream))) {
            StringBuilder checks = new StringBuilder();
            StringBuilder proxied = new StringBuilder();
            for (int i = 0; i < 6; i++) {
                // curl -s -o /dev/null -w '%{http_code} ' -d '{"policy":"per-client","key":"alice"}' .../v1/check
                checks.append(server.decision("/v1/check", "{\"policy\":\"per-client\",\"key\":\"alice\"}")
                                .statusCode())
                        .append(' ');
                // curl -s -o /dev/null -w '%{http_code} ' -H 'X-API-Key: k1' .../api/hello
                proxied.append(server.get("/api/hello", "X-API-Key", "k1").statusCode())
                        .append(' ');
            }

            String readme = Files.readString(DocumentationExamples.PROJECT.resolve("README.md"));
            assertThat(checks.toString()).isEqualTo("200 200 200 200 200 429 ");
            assertThat(proxied.toString()).isEqualTo("200 200 200 200 200 429 ");
            assertThat(readme)
                    .contains("--json '{\"policy\":\"per-client\",\"key\":\"alice\"}' http://localhost:8082/v1/check")
                    .contains("-H 'X-API-Key: k1' http://localhost:8080/api/hello")
                    .contains("200 200 200 200 200 429")
                    .contains("tollgate management on http://127.0.0.1:9090\n"
                            + "tollgate decision api on http://127.0.0.1:8082\n"
                            + "tollgate listening on http://0.0.0.0:8080");
        }
    }

    /** Builds the request an exchange shows: method, path, headers and body. */
    private static HttpRequest request(RunningServer server, String exchange) {
        String[] parts = exchange.split("\n\n", 2);
        String[] lines = parts[0].split("\n");
        String[] requestLine = lines[0].split(" ");
        // the decision API answers on its own port beside the proxy, as the page's file says
        HttpRequest.Builder request =
                requestLine[1].startsWith("/v1/") && server.server().decisionUri() != null
                        ? HttpRequest.newBuilder(server.server().decisionUri().resolve(requestLine[1]))
                        : server.request(requestLine[1]);
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            request.header(
                    lines[i].substring(0, colon), lines[i].substring(colon + 1).strip());
        }
        String body = parts.length > 1 ? parts[1].strip() : "";
        return request.method(requestLine[0], HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    /** Asserts the status of the status line, every header shown, and the body. */
    private static void assertAnswers(HttpResponse<String> response, String exchange) {
        String[] parts = exchange.split("\n\n", 2);
        String[] lines = parts[0].split("\n");
        assertThat(response.statusCode()).isEqualTo(Integer.parseInt(lines[0].split(" ")[1]));
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            String name = lines[i].substring(0, colon);
            assertThat(response.headers().allValues(name))
                    .as(name)
                    .containsExactly(lines[i].substring(colon + 1).strip());
        }
        assertThat(response.body()).isEqualTo(parts[1].strip());
    }
}
