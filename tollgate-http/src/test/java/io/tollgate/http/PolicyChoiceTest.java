package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.fixtures.ManualTimeSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Policies chosen per request (a plan by header, JWT claim or API-key table), overrides, allow and deny lists. */
class PolicyChoiceTest {

    private static final String POLICIES = """
            policies:
              free:
                limits:
                  - capacity: 2
                    refill: 1/h
              gold:
                limits:
                  - capacity: 5
                    refill: 1/h
              internal:
                limits:
                  - capacity: 8
                    refill: 1/h
            """;

    @TempDir
    Path dir;

    private final ManualTimeSource time = new ManualTimeSource();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    private RequestLimiter limiter(String rule) {
        RequestLimiterConfig config = RequestLimiterConfig.parse(POLICIES + "rules:\n" + rule, "rules.yaml");
        return config.toBuilder(InMemoryRateLimiter.builder().timeSource(time).build())
                .metrics(MicrometerRequestMetrics.of(meters))
                .build();
    }

    /** How many of {@code count} requests pass, each shaped by {@code shape}. */
    private static int admitted(RequestLimiter limiter, int count, UnaryOperator<TestRequest> shape) {
        int allowed = 0;
        for (int i = 0; i < count; i++) {
            if (decide(limiter, shape.apply(TestRequest.get("/api/orders"))).allowed()) {
                allowed++;
            }
        }
        return allowed;
    }

    private static RequestDecision decide(RequestLimiter limiter, TestRequest request) {
        return limiter.decide(request).toCompletableFuture().join();
    }

    private static String jwt(String payloadJson) {
        Base64.Encoder base64 = Base64.getUrlEncoder().withoutPadding();
        return "Bearer " + base64.encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + base64.encodeToString(payloadJson.getBytes(StandardCharsets.UTF_8)) + ".c2lnbmF0dXJl";
    }

    @Test
    void aHeaderSetByTheAuthLayerChoosesThePlanOfTheSameClient() {
        RequestLimiter limiter = limiter("""
                  - key: header:X-API-Key
                    policy: free
                    policy-from:
                      header: X-Plan
                """);

        int asFree = admitted(limiter, 10, r -> r.header("X-API-Key", "k-1").header("X-Plan", "free"));
        int asGold = admitted(limiter, 10, r -> r.header("X-API-Key", "k-2").header("X-Plan", "gold"));
        int unknownPlan =
                admitted(limiter, 10, r -> r.header("X-API-Key", "k-3").header("X-Plan", "platinum"));
        int noPlan = admitted(limiter, 10, r -> r.header("X-API-Key", "k-4"));

        assertThat(List.of(asFree, asGold, unknownPlan, noPlan)).containsExactly(2, 5, 2, 2);
    }

    @Test
    void theChosenPolicyNamesTheHeaderFieldsAndBucket() {
        RequestLimiter limiter = limiter("""
                  - key: header:X-API-Key
                    policy: free
                    policy-from:
                      header: X-Plan
                """);

        RequestDecision gold = decide(
                limiter, TestRequest.get("/api").header("X-API-Key", "k-1").header("X-Plan", "gold"));
        RequestDecision free = decide(limiter, TestRequest.get("/api").header("X-API-Key", "k-1"));

        assertThat(gold.headers()).containsEntry("RateLimit", "\"gold\";r=4;t=3600");
        assertThat(free.headers()).containsEntry("RateLimit", "\"free\";r=1;t=3600");
    }

    @Test
    void aJwtClaimChoosesThePlanWithoutTheSignatureBeingChecked() {
        RequestLimiter limiter = limiter("""
                  - key: header:X-API-Key
                    policy: free
                    policy-from:
                      jwt-claim: plan
                """);

        int gold = admitted(
                limiter,
                10,
                r -> r.header("X-API-Key", "k-1")
                        .header(
                                "Authorization",
                                jwt("{\"sub\":\"a\",\"roles\":[\"x\",{\"plan\":\"free\"}],\"plan\":\"gold\"}")));
        int notAJwt = admitted(limiter, 10, r -> r.header("X-API-Key", "k-2").header("Authorization", "Bearer abc"));
        int noClaim = admitted(
                limiter, 10, r -> r.header("X-API-Key", "k-3").header("Authorization", jwt("{\"sub\":\"b\"}")));

        assertThat(List.of(gold, notAJwt, noClaim)).containsExactly(5, 2, 2);
    }

    @Test
    void aTableFromApiKeyToPlanChoosesThePolicyOfEachKey() {
        RequestLimiter limiter = limiter("""
                  - key: header:X-API-Key
                    policy: free
                    policy-from:
                      api-keys:
                        k-gold: gold
                """);

        assertThat(admitted(limiter, 10, r -> r.header("X-API-Key", "k-gold"))).isEqualTo(5);
        assertThat(admitted(limiter, 10, r -> r.header("X-API-Key", "k-other"))).isEqualTo(2);
    }

    @Test
    void aTableInAFileOfItsOwnIsReadAgainWhenItChanges() throws Exception {
        Path plans = Files.writeString(dir.resolve("plans.yaml"), "k-1: gold\n");
        RequestLimiter limiter = limiter("""
                  - key: header:X-API-Key
                    policy: free
                    policy-from:
                      api-keys-file: %s
                """.formatted(plans));
        int before = admitted(limiter, 10, r -> r.header("X-API-Key", "k-1"));

        Files.writeString(plans, "k-1: gold\nk-2: internal\n");
        Files.setLastModifiedTime(plans, FileTime.from(Instant.now().plusSeconds(5)));
        Thread.sleep(1_100);
        int after = admitted(limiter, 10, r -> r.header("X-API-Key", "k-2"));
        Files.writeString(plans, "k-1: [not, a, name]\n");
        Files.setLastModifiedTime(plans, FileTime.from(Instant.now().plusSeconds(10)));
        Thread.sleep(1_100);
        int broken = admitted(limiter, 10, r -> r.header("X-API-Key", "k-2").header("X", "again"));

        assertThat(before).isEqualTo(5);
        assertThat(after).isEqualTo(8);
        assertThat(broken)
                .as("a broken file keeps the last table (and k-2's spent bucket)")
                .isZero();
        assertThat(admitted(limiter, 1, r -> r.header("X-API-Key", "k-3"))).isEqualTo(1);
    }

    @Test
    void anOverrideBeatsTheSource() {
        RequestLimiter limiter = limiter("""
                  - key: header:X-API-Key
                    policy: free
                    policy-from:
                      header: X-Plan
                    overrides:
                      k-ops: internal
                """);

        assertThat(admitted(limiter, 20, r -> r.header("X-API-Key", "k-ops").header("X-Plan", "gold")))
                .isEqualTo(8);
    }

    @Test
    void anAllowedClientIsNeverLimitedButCounted() {
        RequestLimiter limiter = limiter("""
                  - key: header:X-API-Key
                    policy: free
                    allow: [k-monitor, 10.1.0.0/16]
                """);

        int monitor = admitted(limiter, 10, r -> r.header("X-API-Key", "k-monitor"));
        int fromTheOffice =
                admitted(limiter, 10, r -> r.header("X-API-Key", "k-7").from("10.1.2.3"));
        int anyoneElse = admitted(limiter, 10, r -> r.header("X-API-Key", "k-8"));
        RequestDecision unmarked = decide(limiter, TestRequest.get("/api").header("X-API-Key", "k-monitor"));

        assertThat(List.of(monitor, fromTheOffice, anyoneElse)).containsExactly(10, 10, 2);
        assertThat(unmarked.headers()).isEmpty();
        assertThat(meters.counter("tollgate.http.listed", "policy", "free", "list", "allow")
                        .count())
                .isEqualTo(21);
    }

    @Test
    void aDeniedClientIsRefusedWith403AndAProblemByKeyOrAddress() {
        RequestLimiter limiter = limiter("""
                  - key: header:X-API-Key
                    policy: free
                    deny: [k-abuser, 198.51.100.0/24, "2001:db8::/32"]
                """);

        RequestDecision byKey = decide(limiter, TestRequest.get("/api").header("X-API-Key", "k-abuser"));
        RequestDecision byAddress = decide(
                limiter, TestRequest.get("/api").header("X-API-Key", "k-1").from("198.51.100.9"));
        RequestDecision byV6 = decide(
                limiter, TestRequest.get("/api").header("X-API-Key", "k-2").from("2001:db8::7"));
        RequestDecision other = decide(limiter, TestRequest.get("/api").header("X-API-Key", "k-3"));

        for (RequestDecision denied : List.of(byKey, byAddress, byV6)) {
            assertThat(denied.status()).isEqualTo(403);
            assertThat(denied.headers()).containsEntry("Content-Type", "application/problem+json");
            assertThat(new String(denied.body(), StandardCharsets.UTF_8))
                    .contains("\"status\":403", "\"detail\":\"Requests from this client are refused.\"");
        }
        assertThat(other.allowed()).isTrue();
        assertThat(meters.counter("tollgate.http.listed", "policy", "free", "list", "deny")
                        .count())
                .isEqualTo(3);
    }

    @Test
    void aDryRunRuleOnlyCountsADeniedClient() {
        RequestLimiter limiter = limiter("""
                  - key: header:X-API-Key
                    policy: free
                    dry-run: true
                    deny: [k-abuser]
                """);

        assertThat(decide(limiter, TestRequest.get("/api").header("X-API-Key", "k-abuser"))
                        .allowed())
                .isTrue();
        assertThat(meters.counter("tollgate.http.listed", "policy", "free", "list", "deny")
                        .count())
                .isEqualTo(1);
    }

    @Test
    void whatCanBeKnownWrongIsAConfigurationError() {
        List<String> messages = new ArrayList<>();
        for (String rule : List.of(
                "  - policy: free\n    policy-from: {api-keys: {k-1: platinum}}\n",
                "  - policy: free\n    overrides: {k-1: platinum}\n",
                "  - policy: free\n    policy-from: {header: X-Plan, jwt-claim: plan}\n",
                "  - policy: free\n    policy-from: {cookie: plan}\n",
                "  - policy: free\n    allow: [k-1]\n    deny: [k-1]\n",
                "  - policy: free\n    deny: [10.0.0.0/40]\n",
                "  - policy: internal\n    cost: 3\n    overrides: {k-1: free}\n",
                "  - policy: free\n    policy-from: {api-keys-file: /no/such/plans.yaml}\n")) {
            assertThatThrownBy(() -> limiter(rule))
                    .isInstanceOf(IllegalArgumentException.class)
                    .satisfies(e -> messages.add(e.getMessage()));
        }

        assertThat(messages)
                .containsExactly(
                        "rules.yaml:16: rules[0].policy-from.api-keys.k-1: unknown policy 'platinum'; defined: free, gold,"
                                + " internal",
                        "rules.yaml:16: rules[0].overrides.k-1: unknown policy 'platinum'; defined: free, gold, internal",
                        "rules.yaml:16: rules[0].policy-from: needs exactly one of header, jwt-claim, api-keys or"
                                + " api-keys-file",
                        "rules.yaml:16: rules[0].policy-from: unknown setting 'cookie'; known: api-keys, api-keys-file,"
                                + " header, jwt-claim",
                        "rules.yaml:17: rules[0].deny: 'k-1' is on both the allow and the deny list",
                        "rules.yaml:16: rules[0].deny: invalid IP block '10.0.0.0/40': prefix length must be 0 to 32",
                        "rules.yaml:16: rules[0].cost: cost 3 exceeds the smallest capacity (2) of policy 'free': such a request"
                                + " could never pass",
                        "rules.yaml:16: rules[0].policy-from.api-keys-file: cannot read API key file"
                                + " '/no/such/plans.yaml': no such file");
    }
}
