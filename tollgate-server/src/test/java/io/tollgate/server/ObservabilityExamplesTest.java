package io.tollgate.server;

import static io.tollgate.server.EnvoyRateLimitServiceTest.descriptor;
import static io.tollgate.server.EnvoyRateLimitServiceTest.request;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.fixtures.ObservabilityExamples;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.RequiredBinary;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * Keeps examples/observability/ true: the alert rules pass {@code promtool check rules} and their unit tests
 * ({@code promtool test rules}), which fire every alert; each of the dashboard's queries is PromQL that
 * promtool accepts; and every metric the dashboard and the rules name is in a real scrape of a server on
 * Redis that has made decisions, answered Envoy, refused a configuration file and lost its Redis.
 */
@Timeout(120)
class ObservabilityExamplesTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Path RULES = ObservabilityExamples.DIRECTORY.resolve("tollgate-alerts.yml");
    private static final Path RULE_TESTS = ObservabilityExamples.DIRECTORY.resolve("tollgate-alerts-test.yml");
    private static final Path DASHBOARD = ObservabilityExamples.DIRECTORY.resolve("tollgate-dashboard.json");

    @TempDir
    Path dir;

    @Test
    void theAlertRulesPassPromtoolsCheck() throws Exception {
        assertThat(promtool("check", "rules", RULES.getFileName().toString())).contains("SUCCESS: 5 rules found");
    }

    @Test
    void theExamplePrometheusConfigurationIsValidAndLoadsTheRules() throws Exception {
        assertThat(promtool("check", "config", "prometheus.yml"))
                .contains("SUCCESS: 1 rule files found")
                .contains("SUCCESS: 5 rules found");
    }

    @Test
    void theScrapeConfigurationOfTheDocumentationIsTheExamplesOwn() throws Exception {
        String page = Files.readString(DocumentationExamples.PROJECT.resolve("docs/observability.md"));
        Matcher block = Pattern.compile("```yaml\n(.*?)```", Pattern.DOTALL).matcher(page);

        assertThat(block.find()).isTrue();
        assertThat(Files.readString(ObservabilityExamples.DIRECTORY.resolve("prometheus.yml")))
                .contains(block.group(1));
    }

    @Test
    void everyAlertFiresInThePromtoolUnitTests() throws Exception {
        Set<String> alerts = new TreeSet<>();
        for (Map<String, Object> rule : rules(RULES)) {
            alerts.add((String) rule.get("alert"));
        }
        Set<String> fired = new TreeSet<>();
        for (Map<String, Object> test : list(yaml(RULE_TESTS).get("tests"))) {
            for (Map<String, Object> check : list(test.get("alert_rule_test"))) {
                if (!list(check.get("exp_alerts")).isEmpty()) {
                    fired.add((String) check.get("alertname"));
                }
            }
        }

        String output = promtool("test", "rules", RULE_TESTS.getFileName().toString());

        assertThat(alerts)
                .containsExactlyInAnyOrder(
                        "TollgateStoreUnreachable",
                        "TollgateDegradedDecisions",
                        "TollgateCircuitOpen",
                        "TollgateConfigReloadFailed",
                        "TollgateRefusalRatioJump");
        assertThat(fired).as("alerts some unit test expects to fire").isEqualTo(alerts);
        assertThat(output).contains("SUCCESS");
    }

    @Test
    void everyQueryOfTheDashboardIsPromQlThatPromtoolAccepts() throws Exception {
        List<String> queries = dashboardQueries();
        List<Map<String, Object>> records = new ArrayList<>();
        for (String query : queries) {
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("record", "dashboard:query_" + records.size());
            // Grafana's variables, as Grafana would fill them in
            record.put(
                    "expr",
                    query.replace("$__rate_interval", "1m")
                            .replace("$__interval", "1m")
                            .replace("$job", ".*")
                            .replace("$policy", ".*"));
            records.add(record);
        }
        Path file = dir.resolve("dashboard-queries.yml");
        Files.writeString(
                file, new Yaml().dump(Map.of("groups", List.of(Map.of("name", "dashboard", "rules", records)))));

        String output = promtool(dir, "check", "rules", file.getFileName().toString());

        assertThat(queries).hasSizeGreaterThanOrEqualTo(12);
        assertThat(output).contains("SUCCESS: " + queries.size() + " rules found");
    }

    @Test
    void everyPanelOfTheDashboardSaysWhatItShowsAndAsksTheChosenDataSource() throws Exception {
        // JSON is YAML: SnakeYAML reads the dashboard as it reads the rules
        Map<String, Object> dashboard = yaml(DASHBOARD);
        Map<?, ?> templating = (Map<?, ?>) dashboard.get("templating");

        assertThat(dashboard.get("uid")).isEqualTo("tollgate-overview");
        assertThat(list(templating.get("list")).get(0)).containsEntry("type", "datasource");
        for (Map<String, Object> panel : list(dashboard.get("panels"))) {
            if (panel.get("type").equals("row")) {
                continue;
            }
            assertThat((String) panel.get("description"))
                    .as("description of %s", panel.get("title"))
                    .isNotBlank();
            assertThat(((Map<?, ?>) panel.get("datasource")).get("uid")).isEqualTo("${datasource}");
            assertThat(list(panel.get("targets")))
                    .as("queries of %s", panel.get("title"))
                    .isNotEmpty();
        }
    }

    @Test
    void everyMetricTheDashboardAndTheRulesNameIsInARealScrapeOfTheServer() throws Exception {
        Upstream upstream = Upstream.start();
        Path limits = Files.createDirectories(dir.resolve("ratelimit"));
        Files.writeString(limits.resolve("observability.yaml"), """
                domain: observability
                descriptors:
                  - key: client
                    rate_limit:
                      unit: minute
                      requests_per_unit: 1
                """);
        String config = """
                redis:
                  uri: %s
                  timeout: 50ms
                policies:
                  per-client:
                    limits:
                      - capacity: 2
                        refill: 1/h
                rules:
                  - path: /api/**
                    key: header:X-API-Key
                    policy: per-client
                server:
                  upstream: %s
                  management-port: 0
                envoy:
                  port: 0
                  host: 127.0.0.1
                  config: %s
                """.formatted(redis.server().uri(), upstream.uri(), limits);
        Path file = Files.writeString(dir.resolve("tollgate.yaml"), config);
        ManagedChannel channel = null;
        try (RunningServer server = RunningServer.start(ServerConfig.load(file).withPort(0))) {
            for (int i = 0; i < 4; i++) {
                server.get("/api/items", "X-API-Key", "flood");
            }
            channel = NettyChannelBuilder.forAddress(
                            "127.0.0.1", server.server().envoyPort())
                    .usePlaintext()
                    .build();
            RateLimitServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .shouldRateLimit(request("observability", descriptor("client", "a")));
            Files.writeString(file, config.replace("capacity: 2", "capacity: 0"));
            assertThat(server.management("POST", "/admin/reload").statusCode()).isEqualTo(422);
            redis.server().kill();
            for (int i = 0; i < 4; i++) {
                server.get("/api/items", "X-API-Key", "client-" + i);
            }

            String scrape = server.management("GET", "/metrics").body();

            assertThat(ObservabilityExamples.metricNames())
                    .contains("tollgate_decisions_total", "tollgate_redis_latency_seconds_bucket")
                    .containsAll(ObservabilityExamples.serverOnly());
            assertThat(ObservabilityExamples.missingFrom(ObservabilityExamples.metricNames(), scrape))
                    .as("metrics the dashboard or the rules name that the server's scrape lacks")
                    .isEmpty();
            assertThat(scrape).contains("tollgate_config_last_reload_successful 0.0");
        } finally {
            if (channel != null) {
                channel.shutdownNow();
            }
            upstream.close();
            redis.server().heal();
        }
    }

    private List<String> dashboardQueries() throws IOException {
        List<String> queries = new ArrayList<>();
        for (Map<String, Object> panel : list(yaml(DASHBOARD).get("panels"))) {
            for (Map<String, Object> target : list(panel.get("targets"))) {
                queries.add((String) target.get("expr"));
            }
        }
        return queries;
    }

    private static String promtool(String... arguments) throws Exception {
        return promtool(ObservabilityExamples.DIRECTORY, arguments);
    }

    /** Runs promtool in {@code directory}; returns what it printed, or fails with it if it did not succeed. */
    private static String promtool(Path directory, String... arguments) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(RequiredBinary.find("promtool", "prometheus").toString());
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command)
                .directory(directory.toFile())
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("promtool %s:%n%s", command, output).isZero();
        return output;
    }

    private static Map<String, Object> yaml(Path file) throws IOException {
        return new Yaml().load(Files.readString(file));
    }

    private static List<Map<String, Object>> rules(Path file) throws IOException {
        List<Map<String, Object>> rules = new ArrayList<>();
        for (Map<String, Object> group : list(yaml(file).get("groups"))) {
            rules.addAll(list(group.get("rules")));
        }
        return rules;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object value) {
        return value == null ? List.of() : (List<Map<String, Object>>) value;
    }
}
