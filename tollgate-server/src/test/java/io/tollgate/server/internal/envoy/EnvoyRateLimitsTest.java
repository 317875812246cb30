package io.tollgate.server.internal.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Entry;
import io.tollgate.server.internal.envoy.EnvoyRateLimits.Match;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** envoyproxy/ratelimit's configuration format, its examples written again as test data, and its matching. */
class EnvoyRateLimitsTest {

    private static final Map<String, Policy> POLICIES =
            Map.of("per-client", Policy.of("per-client", Limit.of(10, Rate.perSecond(5))));

    private static final String EDGE = """
            domain: edge_proxy_per_ip
            descriptors:
              - key: remote_address
                rate_limit:
                  name: per_ip
                  unit: minute
                  requests_per_unit: 10
                  tollgate_capacity: 20
              - key: remote_address
                value: 10.0.0.1
                rate_limit:
                  unlimited: true
              - key: remote_address
                value: 50.0.0.5
                shadow_mode: true
                rate_limit:
                  unit: week
                  requests_per_unit: 7
              - key: client
                tollgate_policy: per-client
            """;

    private static Optional<Match> match(EnvoyRateLimits limits, String domain, String... keysAndValues) {
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            entries.add(new Entry(keysAndValues[i], keysAndValues[i + 1]));
        }
        return limits.match(domain, entries);
    }

    @Test
    void aValueDescriptorIsARateLimitAsATokenBucketOfTheSameRate() {
        EnvoyRateLimits limits = EnvoyRateLimits.parse(ReadmeExamples.MONGO, "mongo.yaml", POLICIES);

        Match users = match(limits, "mongo_cps", "database", "users").orElseThrow();

        assertThat(users.policy().limits()).containsExactly(Limit.of(500, Rate.of(500, Duration.ofSeconds(1))));
        assertThat(users.bucketKey()).isEqualTo("mongo_cps|database=users");
        assertThat(users.requestsPerUnit()).isEqualTo(500);
        assertThat(users.unit()).isEqualTo("SECOND");
        assertThat(match(limits, "mongo_cps", "database", "other"))
                .as("no key-only descriptor")
                .isEmpty();
        assertThat(match(limits, "elsewhere", "database", "users"))
                .as("an unknown domain")
                .isEmpty();
        assertThat(users.policy().name())
                .isNotEqualTo(match(limits, "mongo_cps", "database", "default")
                        .orElseThrow()
                        .policy()
                        .name());
    }

    @Test
    void nestedDescriptorsMatchLevelByLevelAndAKeyAloneGivesEachValueItsOwnBucket() {
        EnvoyRateLimits limits = EnvoyRateLimits.parse(ReadmeExamples.MESSAGING, "messaging.yaml", Map.of());

        Match marketing = match(limits, "messaging", "message_type", "marketing", "to_number", "2061234567")
                .orElseThrow();
        Match any = match(limits, "messaging", "to_number", "2061234567").orElseThrow();
        Match another = match(limits, "messaging", "to_number", "2069999999").orElseThrow();

        assertThat(marketing.requestsPerUnit()).isEqualTo(5);
        assertThat(marketing.bucketKey()).isEqualTo("messaging|message_type=marketing|to_number=2061234567");
        assertThat(any.requestsPerUnit()).isEqualTo(100);
        assertThat(another.bucketKey()).isNotEqualTo(any.bucketKey());
        assertThat(another.policy()).isEqualTo(any.policy());
        assertThat(match(limits, "messaging", "message_type", "marketing"))
                .as("a level without a limit of its own")
                .isEmpty();
        assertThat(match(limits, "messaging", "message_type", "transactional", "to_number", "1"))
                .isEmpty();
    }

    @Test
    void aValueBeatsTheKeyAloneAndTollgatesKeysSetTheCapacityOrAPolicy() {
        EnvoyRateLimits limits = EnvoyRateLimits.parse(EDGE, "edge.yaml", POLICIES);

        Match anyIp =
                match(limits, "edge_proxy_per_ip", "remote_address", "10.0.0.9").orElseThrow();
        Match office =
                match(limits, "edge_proxy_per_ip", "remote_address", "10.0.0.1").orElseThrow();
        Match watched =
                match(limits, "edge_proxy_per_ip", "remote_address", "50.0.0.5").orElseThrow();
        Match client = match(limits, "edge_proxy_per_ip", "client", "c-1").orElseThrow();

        assertThat(anyIp.policy().limits()).containsExactly(Limit.of(20, Rate.of(10, Duration.ofMinutes(1))));
        assertThat(anyIp.name()).isEqualTo("per_ip");
        assertThat(office.unlimited()).isTrue();
        assertThat(watched.shadow()).isTrue();
        assertThat(watched.policy().limits()).containsExactly(Limit.of(7, Rate.of(7, Duration.ofDays(7))));
        assertThat(client.policy()).isEqualTo(POLICIES.get("per-client"));
        assertThat(client.bucketKey()).isEqualTo("edge_proxy_per_ip|client=c-1");
    }

    @Test
    void zeroRequestsPerUnitBlocksAsInEnvoysReadme() {
        EnvoyRateLimits limits = EnvoyRateLimits.parse(
                ReadmeExamples.MONGO
                        .replace("value: default", "value: blocked")
                        .replaceFirst("requests_per_unit: 500\n$", "requests_per_unit: 0\n"),
                "mongo.yaml",
                POLICIES);

        Match blocked = match(limits, "mongo_cps", "database", "blocked").orElseThrow();

        assertThat(blocked.policy()).isNull();
        assertThat(blocked.unlimited()).isFalse();
        assertThat(blocked.requestsPerUnit()).isZero();
        assertThat(blocked.unit()).isEqualTo("SECOND");
    }

    @Test
    void aDescriptorsPolicyKeepsItsNameWhenTheFileIsReorderedSoBucketsSurviveAReload() {
        String reordered = """
                domain: mongo_cps
                descriptors:
                  - key: database
                    value: default
                    rate_limit:
                      unit: second
                      requests_per_unit: 500
                  - key: database
                    value: users
                    rate_limit:
                      unit: second
                      requests_per_unit: 800
                """;

        String before = match(
                        EnvoyRateLimits.parse(ReadmeExamples.MONGO, "a.yaml", POLICIES),
                        "mongo_cps",
                        "database",
                        "users")
                .orElseThrow()
                .policy()
                .name();
        String after = match(EnvoyRateLimits.parse(reordered, "b.yaml", POLICIES), "mongo_cps", "database", "users")
                .orElseThrow()
                .policy()
                .name();

        assertThat(after).isEqualTo(before).matches("envoy\\.[0-9a-f]{16}");
    }

    @Test
    void aDirectoryHoldsOneDomainPerFile(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("mongo.yaml"), ReadmeExamples.MONGO);
        Files.writeString(dir.resolve("messaging.yml"), ReadmeExamples.MESSAGING);
        Files.writeString(dir.resolve("notes.txt"), "not a configuration");

        EnvoyRateLimits limits = EnvoyRateLimits.load(dir, POLICIES);

        assertThat(limits.hasDomain("mongo_cps")).isTrue();
        assertThat(limits.hasDomain("messaging")).isTrue();
        Files.writeString(dir.resolve("again.yaml"), ReadmeExamples.MONGO);
        assertThatThrownBy(() -> EnvoyRateLimits.load(dir, POLICIES))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageEndingWith("mongo.yaml:1: domain: domain 'mongo_cps' is defined twice");
    }

    @Test
    void aBadFileIsRefusedNamingTheLineAndTheSetting() {
        assertThatThrownBy(() -> EnvoyRateLimits.parse("descriptors: []\n", "r.yaml", POLICIES))
                .hasMessage("r.yaml:1: domain: is required");
        assertThatThrownBy(() -> EnvoyRateLimits.parse(
                        ReadmeExamples.MONGO.replace("unit: second", "unit: fortnight"), "r.yaml", POLICIES))
                .hasMessage(
                        "r.yaml:6: descriptors[0].rate_limit.unit: must be second, minute, hour, day, week, month or"
                                + " year, was 'fortnight'");
        assertThatThrownBy(() -> EnvoyRateLimits.parse(
                        ReadmeExamples.MONGO.replace("value: default", "value: users"), "r.yaml", POLICIES))
                .hasMessage("r.yaml:8: descriptors[1]: duplicate descriptor database=users");
        assertThatThrownBy(() -> EnvoyRateLimits.parse(ReadmeExamples.MONGO.replace("500", "-1"), "r.yaml", POLICIES))
                .hasMessageStartingWith("r.yaml:7: descriptors[0].rate_limit.requests_per_unit: ");
        assertThatThrownBy(() -> EnvoyRateLimits.parse(
                        EDGE.replace("requests_per_unit: 10", "requests_per_unit: 0"), "r.yaml", POLICIES))
                .hasMessage("r.yaml:8: descriptors[0].rate_limit.tollgate_capacity: applies only to a limit above 0"
                        + " requests_per_unit");
        assertThatThrownBy(() -> EnvoyRateLimits.parse(
                        ReadmeExamples.MONGO.replace("unit: second", "units: second"), "r.yaml", POLICIES))
                .hasMessageStartingWith("r.yaml:6: descriptors[0].rate_limit: unknown setting 'units'");
        assertThatThrownBy(() -> EnvoyRateLimits.parse(EDGE.replace("per-client", "per-clent"), "r.yaml", POLICIES))
                .hasMessage(
                        "r.yaml:20: descriptors[3].tollgate_policy: unknown policy 'per-clent'; defined: per-client");
    }

    @Test
    void aWildcardValueMatchesTheValuesItStartsAfterAnExactValueAndBeforeTheKeyAlone() {
        EnvoyRateLimits limits = EnvoyRateLimits.parse("""
                domain: paths
                descriptors:
                  - key: path
                    rate_limit: {unit: minute, requests_per_unit: 1}
                  - key: path
                    value: /api/*
                    rate_limit: {unit: minute, requests_per_unit: 2}
                  - key: path
                    value: /api/admin*
                    rate_limit: {unit: minute, requests_per_unit: 3}
                  - key: path
                    value: /api/health
                    rate_limit: {unit: minute, requests_per_unit: 4}
                """, "paths.yaml", POLICIES);

        Match api = match(limits, "paths", "path", "/api/orders").orElseThrow();
        Match other = match(limits, "paths", "path", "/api/users").orElseThrow();

        assertThat(api.requestsPerUnit()).isEqualTo(2);
        assertThat(other.bucketKey()).as("each value its own bucket").isNotEqualTo(api.bucketKey());
        assertThat(match(limits, "paths", "path", "/api/").orElseThrow().requestsPerUnit())
                .as("the prefix itself")
                .isEqualTo(2);
        assertThat(match(limits, "paths", "path", "/api/admin/users")
                        .orElseThrow()
                        .requestsPerUnit())
                .as("the first wildcard in the file's order that matches, as envoyproxy/ratelimit looks")
                .isEqualTo(2);
        assertThat(match(limits, "paths", "path", "/api/health").orElseThrow().requestsPerUnit())
                .as("an exact value first")
                .isEqualTo(4);
        assertThat(match(limits, "paths", "path", "/web").orElseThrow().requestsPerUnit())
                .as("the key alone last")
                .isEqualTo(1);
        assertThat(match(limits, "paths", "route", "/api/orders"))
                .as("another key")
                .isEmpty();
    }

    @Test
    void theReadmesWildcardExampleLimitsEachValueThatStartsWithItsPrefix() {
        EnvoyRateLimits limits = EnvoyRateLimits.parse(ReadmeExamples.WILDCARD, "example9.yaml", POLICIES);

        assertThat(match(limits, "example9", "key1", "value_1").orElseThrow().requestsPerUnit())
                .isEqualTo(20);
        assertThat(match(limits, "example9", "key1", "value_2").orElseThrow().unit())
                .isEqualTo("MINUTE");
        assertThat(match(limits, "example9", "key1", "other")).isEmpty();
    }

    @Test
    void replacesAndDetailedMetricAreReadAsTheReadmeWritesThem() {
        EnvoyRateLimits replaces = EnvoyRateLimits.parse(ReadmeExamples.REPLACES, "example7.yaml", POLICIES);
        EnvoyRateLimits detailed = EnvoyRateLimits.parse(ReadmeExamples.DETAILED_METRIC, "example8.yaml", POLICIES);

        Match specific = match(replaces, "example7", "key_1", "value_1", "user", "bkthomps")
                .orElseThrow();
        Match replacing = match(replaces, "example7", "key_2", "value_2", "user", "bkthomps")
                .orElseThrow();
        Match unspecified =
                match(detailed, "example8", "key1", "unspecified_value").orElseThrow();
        Match value1 = match(detailed, "example8", "key1", "value1").orElseThrow();

        assertThat(specific.name()).isEqualTo("specific_limit");
        assertThat(specific.configured().replaces()).isEmpty();
        assertThat(replacing.configured().replaces()).containsExactly("specific_limit");
        assertThat(unspecified.detailedKeys()).isEqualTo("key1_unspecified_value");
        assertThat(unspecified.keys()).isEqualTo("key1");
        assertThat(value1.detailedKeys()).as("not a detailed descriptor").isNull();
        assertThat(value1.keys()).isEqualTo("key1");
    }

    @Test
    void aReplacesEntryNamesTheLimitItReplacesAndNothingElse() {
        String file = """
                domain: d
                descriptors:
                  - key: k
                    rate_limit:
                      unit: second
                      requests_per_unit: 1
                      replaces:
                        - %s
                """;

        assertThatThrownBy(() -> EnvoyRateLimits.parse(file.formatted("name: ' '"), "r.yaml", POLICIES))
                .hasMessage("r.yaml:8: descriptors[0].rate_limit.replaces[0].name: is required");
        assertThatThrownBy(() -> EnvoyRateLimits.parse(file.formatted("{}"), "r.yaml", POLICIES))
                .hasMessageStartingWith("r.yaml:8: descriptors[0].rate_limit.replaces[0].name: is required");
        assertThatThrownBy(() -> EnvoyRateLimits.parse(file.formatted("names: x"), "r.yaml", POLICIES))
                .hasMessageStartingWith("r.yaml:8: descriptors[0].rate_limit.replaces[0]: unknown setting 'names'");
    }

    @Test
    void mergedFilesOfOneDomainAddTheirDescriptorsAndMayNotDefineOneTwice(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), ReadmeExamples.MONGO);
        Files.writeString(dir.resolve("b.yaml"), """
                domain: mongo_cps
                descriptors:
                  - key: database
                    value: orders
                    rate_limit:
                      unit: second
                      requests_per_unit: 50
                """);

        EnvoyRateLimits merged = EnvoyRateLimits.load(dir, POLICIES, true);

        assertThat(match(merged, "mongo_cps", "database", "users").orElseThrow().requestsPerUnit())
                .isEqualTo(500);
        assertThat(match(merged, "mongo_cps", "database", "orders")
                        .orElseThrow()
                        .requestsPerUnit())
                .isEqualTo(50);
        assertThatThrownBy(() -> EnvoyRateLimits.load(dir, POLICIES, false))
                .hasMessageEndingWith("b.yaml:1: domain: domain 'mongo_cps' is defined twice");
        Files.writeString(dir.resolve("c.yaml"), ReadmeExamples.MONGO);
        assertThatThrownBy(() -> EnvoyRateLimits.load(dir, POLICIES, true))
                .hasMessageEndingWith("c.yaml:3: descriptors[0]: duplicate descriptor database=users");
    }

    @Test
    void anUnlimitedLimitTakesNoUnitAndALimitDoesNotReplaceItself() {
        assertThatThrownBy(() -> EnvoyRateLimits.parse("""
                        domain: d
                        descriptors:
                          - key: k
                            rate_limit:
                              unlimited: true
                              unit: second
                        """, "r.yaml", POLICIES))
                .hasMessage("r.yaml:6: descriptors[0].rate_limit.unit: does not apply to an unlimited rate limit:"
                        + " leave it out");
        assertThatThrownBy(() -> EnvoyRateLimits.parse("""
                        domain: d
                        descriptors:
                          - key: k
                            rate_limit:
                              name: mine
                              unit: second
                              requests_per_unit: 1
                              replaces:
                                - name: mine
                        """, "r.yaml", POLICIES))
                .hasMessage("r.yaml:9: descriptors[0].rate_limit.replaces: must not name its own rate limit, 'mine'");
    }

    @Test
    void aDetailedDescriptorIsNamedByTheDescriptorsItMatchedAndTheLastValueAsEnvoyproxyRatelimitNamesIt() {
        EnvoyRateLimits limits = EnvoyRateLimits.parse("""
                domain: messaging
                descriptors:
                  - key: message_type
                    value: marketing
                    descriptors:
                      - key: to_number
                        detailed_metric: true
                        rate_limit: {unit: day, requests_per_unit: 5}
                """, "m.yaml", POLICIES);

        Match match = match(limits, "messaging", "message_type", "marketing", "to_number", "2061111111")
                .orElseThrow();

        assertThat(match.detailedKeys()).isEqualTo("message_type_marketing.to_number_2061111111");
        assertThat(match.keys()).isEqualTo("message_type.to_number");
    }
}
