package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.FailurePolicy;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Priority;
import io.tollgate.Rate;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.fixtures.ManualTimeSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RequestLimiterConfigTest {

    private static final String YAML = """
            policies:
              per-ip:
                limits:
                  - capacity: 2
                    refill: 1/s
              api.v2:
                limits:
                  - capacity: 10
                    refill: 10/s
                  - capacity: 1000
                    refill: 1000/h
            rules:
              - path: /api/**
                methods: [GET, POST]
                policy: per-ip
              - path: /api/**
                host: api.example.com
                require-header: X-Tenant
                key: header:X-API-Key
                policy: api.v2
                cost: 2
                on-missing-key: reject:401
                dry-run: true
            client-ip:
              trusted-proxies: [10.0.0.0/8, 192.168.0.1]
              forwarding-header: forwarded
              group-ipv6-by-64: true
            responses:
              legacy-headers: true
              degraded-header: true
              refusal-status: 503
              unavailable-status: 500
              problem-type: https://example.com/problems/rate-limited
            """;

    private static final String PROPERTIES = """
            policies.per-ip.limits[0].capacity=2
            policies.per-ip.limits[0].refill=1/s
            policies.api.v2.limits[0].capacity=10
            policies.api.v2.limits[0].refill=10/s
            policies.api.v2.limits[1].capacity=1000
            policies.api.v2.limits[1].refill=1000/h
            rules[0].path=/api/**
            rules[0].methods=GET, POST
            rules[0].policy=per-ip
            rules[1].path=/api/**
            rules[1].host=api.example.com
            rules[1].require-header=X-Tenant
            rules[1].key=header:X-API-Key
            rules[1].policy=api.v2
            rules[1].cost=2
            rules[1].on-missing-key=reject:401
            rules[1].dry-run=true
            client-ip.trusted-proxies=10.0.0.0/8, 192.168.0.1
            client-ip.forwarding-header=forwarded
            client-ip.group-ipv6-by-64=true
            responses.legacy-headers=true
            responses.degraded-header=true
            responses.refusal-status=503
            responses.unavailable-status=500
            responses.problem-type=https://example.com/problems/rate-limited
            """;

    private static final Policy PER_IP = Policy.of("per-ip", Limit.of(2, Rate.perSecond(1)));
    private static final Policy API =
            Policy.of("api.v2", Limit.of(10, Rate.perSecond(10)), Limit.of(1000, Rate.perHour(1000)));

    @Test
    void readsPoliciesRulesAndSettingsFromYaml() {
        RequestLimiterConfig config = RequestLimiterConfig.parse(YAML, "tollgate.yaml");

        assertThat(config.policies()).containsExactly(PER_IP, API);
        assertThat(config.rules())
                .containsExactly(
                        Rule.builder(PER_IP)
                                .path("/api/**")
                                .methods("GET", "POST")
                                .build(),
                        Rule.builder(API)
                                .path("/api/**")
                                .host("api.example.com")
                                .requireHeader("X-Tenant")
                                .key(ClientKey.header("X-API-Key"))
                                .cost(2)
                                .onMissingKey(MissingKey.reject(401))
                                .dryRun(true)
                                .build());
    }

    @Test
    void aPropertiesFileSaysTheSameAsTheYamlFile() {
        RequestLimiterConfig yaml = RequestLimiterConfig.parse(YAML, "tollgate.yaml");
        RequestLimiterConfig properties = RequestLimiterConfig.parse(PROPERTIES, "tollgate.properties");

        assertThat(properties.policies()).containsExactlyInAnyOrderElementsOf(yaml.policies());
        assertThat(properties.rules()).isEqualTo(yaml.rules());
        TestRequest forwarded =
                TestRequest.get("/api").from("10.1.2.3").header("Forwarded", "for=\"[2001:db8:1:2::99]\"");
        assertThat(properties.clientIps().clientIp(forwarded))
                .isEqualTo(yaml.clientIps().clientIp(forwarded))
                .isEqualTo("2001:db8:1:2::/64");
    }

    @Test
    void theResponseSettingsReachTheRequestLimiter() {
        RequestLimiter requests = RequestLimiterConfig.parse(YAML, "tollgate.yaml")
                .newRequestLimiter(InMemoryRateLimiter.builder()
                        .timeSource(new ManualTimeSource())
                        .build());
        TestRequest request = TestRequest.get("/api").header("X-Tenant", "t").header("X-API-Key", "k");

        RequestDecision first = requests.decide(request).toCompletableFuture().join();
        requests.decide(request).toCompletableFuture().join();
        RequestDecision third = requests.decide(request).toCompletableFuture().join();

        assertThat(first.headers()).containsKey("X-RateLimit-Limit");
        assertThat(third.status()).isEqualTo(503);
        assertThat(new String(third.body(), java.nio.charset.StandardCharsets.UTF_8))
                .contains("\"type\":\"https://example.com/problems/rate-limited\"");
    }

    @Test
    void theUnavailableStatusReachesTheRequestLimiter() {
        RequestLimiter requests = RequestLimiterConfig.parse(YAML, "tollgate.yaml")
                .newRequestLimiter(new DegradedLimiter(FailurePolicy.DENY));

        RequestDecision refused =
                requests.decide(TestRequest.get("/api")).toCompletableFuture().join();

        assertThat(refused.status()).isEqualTo(500);
        assertThat(new String(refused.body(), java.nio.charset.StandardCharsets.UTF_8))
                .contains("\"type\":\"urn:tollgate:limiter-unavailable\"");
    }

    @Test
    void loadsAFileByItsExtension(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("limits.yml"), YAML);

        assertThat(RequestLimiterConfig.load(file).rules()).hasSize(2);
    }

    @Test
    void defaultsMakeARuleKeyedByIpOnEveryPath() {
        RequestLimiterConfig config = RequestLimiterConfig.parse("""
                policies: {p: {limits: [{capacity: 5, refill: 5/s}]}}
                rules: [{policy: p}]
                """, "t.yaml");

        Policy p = Policy.of("p", Limit.of(5, Rate.perSecond(5)));
        assertThat(config.rules()).containsExactly(Rule.builder(p).build());
    }

    @Test
    void readsHowPathsAreReadAndARuleThatMatchesTheExactCase() {
        RequestLimiterConfig config = RequestLimiterConfig.parse("""
                policies: {p: {limits: [{capacity: 5, refill: 5/s}]}}
                rules:
                  - {policy: p, path: /api/**}
                  - {policy: p, path: /Admin/**, path-case: exact}
                paths: {merge-slashes: false, backslash: slash, encoded-slash: keep, parameters: keep}
                """, "t.yaml");

        assertThat(config.newRequestLimiter(InMemoryRateLimiter.create()).paths())
                .isEqualTo(new PathSettings(
                        false,
                        PathSettings.Backslash.SLASH,
                        PathSettings.EncodedSlash.KEEP,
                        PathSettings.Parameters.KEEP));
        assertThat(config.rules().get(0).matches(TestRequest.get("/API/x"))).isTrue();
        assertThat(config.rules().get(1).matches(TestRequest.get("/admin/x"))).isFalse();
        assertThat(config.rules().get(1).matches(TestRequest.get("/Admin/x"))).isTrue();
    }

    @Test
    void withoutAPathsSectionPathsAreReadByTheDefaults() {
        RequestLimiterConfig config = RequestLimiterConfig.parse("""
                policies: {p: {limits: [{capacity: 5, refill: 5/s}]}}
                rules: [{policy: p}]
                """, "t.yaml");

        assertThat(config.newRequestLimiter(InMemoryRateLimiter.create()).paths())
                .isEqualTo(PathSettings.DEFAULT);
    }

    @Test
    void aRuleMaySettleItsCostAfterTheResponse() {
        RequestLimiterConfig config = RequestLimiterConfig.parse("""
                policies: {p: {limits: [{capacity: 5, refill: 5/s}]}}
                rules:
                  - policy: p
                    response-cost: {header: X-Tokens-Used, refund-statuses: [5xx, 429]}
                  - policy: p
                    response-cost:
                      charge-statuses: [401, 403]
                """, "t.yaml");

        assertThat(config.rules())
                .extracting(Rule::responseCost)
                .containsExactly(
                        ResponseCost.fromHeader("X-Tokens-Used").refunding("5xx", "429"),
                        ResponseCost.onlyForStatuses("401", "403"));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "rules: [{policy: nope}] | t.yaml:2: rules[0].policy: unknown policy 'nope'; defined: p",
                "rules: [{path: /a}] | t.yaml:2: rules[0].policy: is required",
                "rules: [{policy: p, cost: 9}] | t.yaml:2: rules[0].cost: cost 9 exceeds the smallest capacity (5)",
                "rules: [{policy: p, cost: ten}] | t.yaml:2: rules[0].cost: must be a whole number, was 'ten'",
                "rules: [{policy: p, path: api}] | t.yaml:2: rules[0].path: path pattern must start with '/'",
                "rules: [{policy: p, key: cookie:x}] | t.yaml:2: rules[0].key: invalid key 'cookie:x'",
                "rules: [{policy: p, on-missing-key: ignore}] | t.yaml:2: rules[0].on-missing-key: invalid",
                "rules: [{policy: p, dry-run: maybe}] | t.yaml:2: rules[0].dry-run: must be true or false",
                "rules: [{policy: p, dry-run: yes}] | t.yaml:2: rules[0].dry-run: must be true or false, was 'yes'",
                "rules: [{policy: p, methds: [GET]}] | t.yaml:2: rules[0]: unknown setting 'methds'; known: allow, concurrency-limit, cost,",
                "rule: [] | t.yaml:2: configuration: unknown setting 'rule'",
                "rules: [{policy: p, response-cost: {}}] | t.yaml:2: rules[0].response-cost: needs header, charge-statuses",
                "rules: [{policy: p, response-cost: {header: 'X Used'}}] | t.yaml:2: rules[0].response-cost.header: a"
                        + " response cost header must be a header name, was 'X Used'",
                "rules: [{policy: p, response-cost: {charge-statuses: [401, 6xx]}}] | t.yaml:2:"
                        + " rules[0].response-cost.charge-statuses: charge-statuses: a status is a code from 100 to 599"
                        + " or a class such as 5xx, was '6xx'",
                "rules: [{policy: p, response-cost: {charge-statuses: [], header: X-Used}}] | t.yaml:2:"
                        + " rules[0].response-cost.charge-statuses: give at least one status",
                "rules: [{policy: p, response-cost: {charge-statuses: [401], refund-statuses: [5xx]}}] | t.yaml:2:"
                        + " rules[0].response-cost.refund-statuses: give charge-statuses (only they cost) or"
                        + " refund-statuses (they cost nothing), not both",
                "rules: [{policy: p, response-cost: {headers: X-Used}}] | t.yaml:2: rules[0].response-cost: unknown"
                        + " setting 'headers'; known: charge-statuses, header, refund-statuses",
                "client-ip: {trusted-proxies: [10.0.0.0/33]} | t.yaml:2: client-ip.trusted-proxies: invalid trusted",
                "client-ip: {forwarding-header: x-real-ip} | t.yaml:2: client-ip.forwarding-header: must be",
                "responses: {refusal-status: 200} | t.yaml:2: responses.refusal-status: must be a 4xx or 5xx",
                "responses: {unavailable-status: 600} | t.yaml:2: responses.unavailable-status: must be a 4xx or 5xx",
                "responses: {problem-type: ''} | t.yaml:2: responses.problem-type: must be a URI",
                "rules: [{policy: p, priority: gold}] | t.yaml:2: rules[0].priority: priority must be critical, default"
                        + " or sheddable, was 'gold'",
                "overload: {max-limit: 50} | t.yaml:2: overload.max-limit: applies only with overload.enabled: true",
                "overload: {enabled: true, min-limit: 30, initial-limit: 20} | t.yaml:2: overload: overload limits must be 1 <= min-limit"
                        + " <= initial-limit <= max-limit, were 30, 20 and 1000",
                "overload: {enabled: true, initial-limit: 0} | t.yaml:2: overload.initial-limit: must be 1 to 1000000,"
                        + " was 0",
                "overload: {enabled: true, critical-reserve: 1.5} | t.yaml:2: overload.critical-reserve: must be a"
                        + " share from 0 to 1, such as 0.1, was 1.5",
                "overload: {enabled: true, default-reserve: lots} | t.yaml:2: overload.default-reserve: must be a share"
                        + " from 0 to 1, such as 0.1, was 'lots'",
                "overload: {enabled: true, critical-reserve: 0.6, default-reserve: 0.5} | t.yaml:2: overload:"
                        + " critical-reserve and default-reserve must be at most 1 together, were 0.6 and 0.5",
                "overload: {enabled: true, max-wait: soon} | t.yaml:2: overload.max-wait: must be",
                "overload: {enabled: true, queue: 5} | t.yaml:2: overload: unknown setting 'queue'; known:",
                "paths: {backslash: allow} | t.yaml:2: paths.backslash: must be refuse or slash, was 'allow'",
                "paths: {encoded-slash: decode} | t.yaml:2: paths.encoded-slash: must be refuse or keep, was 'decode'",
                "paths: {parameters: strip} | t.yaml:2: paths.parameters: must be drop or keep, was 'strip'",
                "paths: {merge-slashes: 1} | t.yaml:2: paths.merge-slashes: must be true or false",
                "rules: [{policy: p, path-case: upper}] | t.yaml:2: rules[0].path-case: must be ignore or exact, was"
                        + " 'upper'",
            })
    void anInvalidSettingIsNamedInTheErrorWithItsLine(String yaml, String message) {
        String text = "policies: {p: {limits: [{capacity: 5, refill: 5/s}]}}\n" + yaml;

        assertThatThrownBy(() -> RequestLimiterConfig.parse(text, "t.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(message.strip());
    }

    @Test
    void readsOverloadProtectionAndThePrioritiesOfRulesAndPlans() {
        RequestLimiterConfig config = RequestLimiterConfig.parse("""
                policies:
                  free: {limits: [{capacity: 5, refill: 5/s}]}
                  gold: {priority: critical, limits: [{capacity: 50, refill: 50/s}]}
                rules:
                  - policy: free
                    path: /batch/**
                    priority: sheddable
                  - policy: free
                    key: header:X-Api-Key
                    policy-from: {header: X-Plan}
                overload:
                  enabled: true
                  min-limit: 2
                  initial-limit: 8
                  max-limit: 64
                  critical-reserve: 0.25
                  default-reserve: 0.25
                  max-wait: 0
                  retry-after: 3s
                """, "t.yaml");

        assertThat(config.overload().settings())
                .isEqualTo(new OverloadProtection.Settings(2, 8, 64, 0.25, 0.25, Duration.ZERO, Duration.ofSeconds(3)));
        assertThat(config.rules().get(0).priority()).isEqualTo(Priority.SHEDDABLE);
        assertThat(config.rules().get(1).priority()).isNull();
        RequestLimiter requests = config.newRequestLimiter(InMemoryRateLimiter.create());
        assertThat(requests.overload()).isSameAs(config.overload());
        RequestDecision gold = requests.decide(
                        TestRequest.get("/api").header("X-Api-Key", "k").header("X-Plan", "gold"))
                .toCompletableFuture()
                .join();
        assertThat(gold.overload().priority()).isEqualTo(Priority.CRITICAL);
    }

    @Test
    void theStartersPropertiesOnTheLoadSheddingPageSayWhatTheirWordsMean() {
        String properties = DocumentationExamples.blocks("docs/load-shedding.md", "properties")
                .get(0)
                .replace("tollgate.", "");

        RequestLimiterConfig config = RequestLimiterConfig.parse(properties, "application.properties");

        assertThat(config.overload().settings()).isEqualTo(OverloadProtection.Settings.defaults());
        assertThat(config.rules().get(0).priority()).isEqualTo(Priority.SHEDDABLE);
        RequestDecision export = config.newRequestLimiter(InMemoryRateLimiter.create())
                .decide(TestRequest.get("/api/exports/1"))
                .toCompletableFuture()
                .join();
        assertThat(export.overload().priority())
                .as("the rule's own, over its policy's")
                .isEqualTo(Priority.SHEDDABLE);
    }

    @Test
    void withoutOverloadEnabledThereIsNoProtection() {
        RequestLimiterConfig config = RequestLimiterConfig.parse("""
                policies: {p: {limits: [{capacity: 5, refill: 5/s}]}}
                rules: [{policy: p}]
                overload: {enabled: false}
                """, "t.yaml");

        assertThat(config.overload()).isNull();
        assertThat(config.newRequestLimiter(InMemoryRateLimiter.create()).overload())
                .isNull();
    }

    @Test
    void theLineIsThatOfTheBadValueInABlockFile() {
        String text = """
                policies:
                  p:
                    limits:
                      - capacity: 5
                        refill: 5/s
                rules:
                  - path: /api/**
                    policy: p
                  - path: /web/**
                    policy: p
                    cost: ten
                """;

        assertThatThrownBy(() -> RequestLimiterConfig.parse(text, "limits.yaml"))
                .hasMessage("limits.yaml:11: rules[1].cost: must be a whole number, was 'ten'");
    }

    @Test
    void aMissingSettingIsReportedAtTheLineOfWhatShouldHoldIt() {
        String text = """
                policies:
                  p:
                    limits:
                      - capacity: 5
                rules: []
                """;

        assertThatThrownBy(() -> RequestLimiterConfig.parse(text, "limits.yaml"))
                .hasMessage("limits.yaml:4: policies.p.limits[0].refill: is required");
    }

    @Test
    void anInvalidPolicyIsNamedInTheError() {
        assertThatThrownBy(() ->
                        RequestLimiterConfig.parse("policies: {p: {limits: [{capacity: 0, refill: 5/s}]}}", "t.yaml"))
                .hasMessage("t.yaml:1: policies.p.limits[0]: capacity must be at least 1, was 0");
        assertThatThrownBy(() ->
                        RequestLimiterConfig.parse("policies: {p: {limits: [{capacity: 5, refill: fast}]}}", "t.yaml"))
                .hasMessageStartingWith("t.yaml:1: policies.p.limits[0].refill: invalid rate 'fast'");
        assertThatThrownBy(() -> RequestLimiterConfig.parse(
                        "policies: {'a b': {limits: [{capacity: 5, refill: 1/s}]}}", "t.yaml"))
                .hasMessageStartingWith("t.yaml:1: policies.a b: invalid policy name 'a b'");
        assertThatThrownBy(() -> RequestLimiterConfig.parse("policies: {p: {capacity: 5, refill: 1/s}}", "t.yaml"))
                .hasMessageStartingWith("t.yaml:1: policies.p: unknown setting 'capacity'; known: limits");
        assertThatThrownBy(() -> RequestLimiterConfig.parse("policies: {p: {}}", "t.yaml"))
                .hasMessage(
                        "t.yaml:1: policies.p.limits: is required: a list of limits, each with capacity and refill");
    }

    @Test
    void invalidYamlIsReportedWithItsLine() {
        assertThatThrownBy(() -> RequestLimiterConfig.parse("rules:\n  - policy: p\n   key: [", "t.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("t.yaml:3: not valid YAML: ");
    }

    @Test
    void aDuplicateYamlKeyIsAnErrorAtItsLine() {
        assertThatThrownBy(() ->
                        RequestLimiterConfig.parse("policies:\n  p:\n    limits: []\n  p:\n    limits: []\n", "t.yaml"))
                .hasMessage("t.yaml:4: policies: duplicate key p");
    }

    @Test
    void anAliasThatHoldsItselfIsAnErrorNotAStackOverflow() {
        assertThatThrownBy(() -> RequestLimiterConfig.parse("a: &a [x, *a]\n", "t.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("values nest deeper than 64 levels (or an alias holds itself)");
    }

    @Test
    void valuesNestedDeeperThanAnySectionAreAnError() {
        String deep = "a: " + "[".repeat(70) + "x" + "]".repeat(70) + "\n";

        assertThatThrownBy(() -> RequestLimiterConfig.parse(deep, "t.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("t.yaml: not valid YAML: Nesting Depth exceeded max 50");
    }

    @Test
    void theTopLevelMustBeAMap() {
        assertThatThrownBy(() -> RequestLimiterConfig.parse("- a\n- b\n", "t.yaml"))
                .hasMessage("t.yaml:1: the top level must be a map of settings");
    }

    @Test
    void anEmptyFileHasNoRules() {
        assertThat(RequestLimiterConfig.parse("", "t.yaml").rules()).isEmpty();
        assertThat(RequestLimiterConfig.parse("# nothing yet\n", "t.yaml").rules())
                .isEmpty();
    }

    @Test
    void aTreeFromAnotherParserIsReadTheSame() {
        RequestLimiterConfig config = RequestLimiterConfig.fromTree(Map.of(
                "policies", Map.of("p", Map.of("limits", List.of(Map.of("capacity", 5, "refill", "5/s")))),
                "rules", List.of(Map.of("policy", "p", "cost", 2, "dry-run", true))));

        assertThat(config.rules())
                .containsExactly(Rule.builder(Policy.of("p", Limit.of(5, Rate.perSecond(5))))
                        .cost(2)
                        .dryRun(true)
                        .build());
        assertThatThrownBy(() -> RequestLimiterConfig.fromTree(Map.of("rules", List.of(Map.of("policy", "q")))))
                .hasMessage("rules[0].policy: unknown policy 'q'; defined: none");
    }

    @Test
    void aGapInPropertyListsIsAnError() {
        assertThatThrownBy(() -> RequestLimiterConfig.parse(
                        "policies.p.limits[0].capacity=5\npolicies.p.limits[0].refill=5/s\nrules[1].policy=p\n",
                        "t.properties"))
                .hasMessage("t.properties: property rules[0] is missing before rules[1]");
    }

    @Test
    void anUnknownFormatIsAnError() {
        assertThatThrownBy(() -> RequestLimiterConfig.parse("{}", "limits.json"))
                .hasMessageContaining("cannot tell the format of 'limits.json'");
    }
}
