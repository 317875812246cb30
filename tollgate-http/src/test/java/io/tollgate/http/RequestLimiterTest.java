package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.Decision;
import io.tollgate.FailurePolicy;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.LimiterArguments;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.fixtures.ManualTimeSource;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class RequestLimiterTest {

    private static final Policy THREE = Policy.of("per-ip", Limit.of(3, Rate.perSecond(1)));
    private static final Policy GLOBAL = Policy.of("global", Limit.of(1_000, Rate.perSecond(1_000)));

    private final ManualTimeSource time = new ManualTimeSource();
    private final InMemoryRateLimiter limiter =
            InMemoryRateLimiter.builder().timeSource(time).build();

    @Test
    void aRequestNoRuleAppliesToIsUnlimitedAndUntouched() {
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(THREE).path("/api/**").build())
                .build();

        RequestDecision decision = decide(requests, TestRequest.get("/health"));

        assertThat(decision.allowed()).isTrue();
        assertThat(decision.headers()).isEmpty();
    }

    @Test
    void allowedResponsesCarryTheRateLimitFields() {
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(THREE).build())
                .build();

        RequestDecision decision = decide(requests, TestRequest.get("/api"));

        assertThat(decision.allowed()).isTrue();
        assertThat(decision.headers())
                .containsEntry("RateLimit-Policy", "\"per-ip\";q=3;w=3")
                .containsEntry("RateLimit", "\"per-ip\";r=2;t=1")
                .doesNotContainKeys("Retry-After", "X-RateLimit-Limit", "Tollgate-Degraded");
    }

    @Test
    void aRefusalIs429WithRetryAfterNoStoreAndAProblemBody() {
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(THREE).build())
                .build();
        for (int i = 0; i < 3; i++) {
            decide(requests, TestRequest.get("/api"));
        }

        RequestDecision refused = decide(requests, TestRequest.get("/api"));

        assertThat(refused.allowed()).isFalse();
        assertThat(refused.status()).isEqualTo(429);
        assertThat(refused.headers())
                .containsEntry("Retry-After", "1")
                .containsEntry("Cache-Control", "no-store")
                .containsEntry("Content-Type", "application/problem+json")
                .containsEntry("RateLimit", "\"per-ip\";r=0;t=3");
        assertThat(new String(refused.body(), StandardCharsets.UTF_8))
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit exceeded for per-ip; retry in 1 s.\",\"policies\":[\"per-ip\"],"
                        + "\"retry_after\":1}");
    }

    @Test
    void passesAgainAfterTheRetryAfter() {
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(THREE).build())
                .build();
        for (int i = 0; i < 4; i++) {
            decide(requests, TestRequest.get("/api"));
        }

        time.advance(Duration.ofSeconds(1));

        assertThat(decide(requests, TestRequest.get("/api")).allowed()).isTrue();
    }

    @Test
    void everyMatchingRuleIsChargedAndAnyRefusalRefuses() {
        Policy perKey = Policy.of("per-key", Limit.of(2, Rate.perMinute(2)));
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(THREE).build())
                .rule(Rule.builder(perKey).key(ClientKey.header("X-API-Key")).build())
                .rule(Rule.builder(GLOBAL).key(ClientKey.constant("all")).build())
                .build();
        TestRequest request = TestRequest.get("/api").header("X-API-Key", "k");

        RequestDecision first = decide(requests, request);
        decide(requests, request);
        RequestDecision third = decide(requests, request);

        assertThat(first.outcomes())
                .extracting(RuleOutcome::key)
                .containsExactly("ip:203.0.113.7", "header:x-api-key:k", "constant:all");
        assertThat(first.headers().get("RateLimit"))
                .isEqualTo("\"per-ip\";r=2;t=1, \"per-key\";r=1;t=30, \"global\";r=999;t=1");
        assertThat(third.allowed()).isFalse();
        assertThat(new String(third.body(), StandardCharsets.UTF_8)).contains("\"policies\":[\"per-key\"]");
        assertThat(third.headers().get("Retry-After")).isEqualTo("30");
    }

    @Test
    void aRefusalLeavesTheRulesAfterItUncharged() {
        Policy perKey = Policy.of("per-key", Limit.of(1, Rate.perMinute(1)));
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(perKey).key(ClientKey.header("X-API-Key")).build())
                .rule(Rule.builder(GLOBAL).key(ClientKey.constant("all")).build())
                .build();
        TestRequest flood = TestRequest.get("/api").header("X-API-Key", "flooder");

        for (int i = 0; i < 100; i++) {
            decide(requests, flood);
        }
        RequestDecision refused = decide(requests, flood);
        RequestDecision other = decide(requests, TestRequest.get("/api").header("X-API-Key", "polite"));

        assertThat(refused.outcomes())
                .singleElement()
                .satisfies(outcome -> assertThat(outcome.policy()).isEqualTo(perKey));
        assertThat(refused.headers().get("RateLimit")).isEqualTo("\"per-key\";r=0;t=60");
        assertThat(other.outcomes().get(1).decision().remaining())
                .as("the flood took one token of the global limit, not 101")
                .isEqualTo(998);
    }

    @Test
    void aRefusalByALaterRuleReportsTheRulesBeforeIt() {
        Policy tinyGlobal = Policy.of("global", Limit.of(1, Rate.perMinute(1)));
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(THREE).build())
                .rule(Rule.builder(tinyGlobal).key(ClientKey.constant("all")).build())
                .build();
        decide(requests, TestRequest.get("/").from("198.51.100.1"));

        RequestDecision refused = decide(requests, TestRequest.get("/").from("198.51.100.2"));

        assertThat(refused.allowed()).isFalse();
        assertThat(refused.headers().get("RateLimit")).isEqualTo("\"per-ip\";r=2;t=1, \"global\";r=0;t=60");
        assertThat(refused.headers().get("Retry-After")).isEqualTo("60");
    }

    @Test
    void rulesWhoseDecisionsArriveLaterAreCheckedInOrderAndStopAtARefusal() {
        DeferredLimiter deferred = new DeferredLimiter(limiter);
        Policy one = Policy.of("one", Limit.of(1, Rate.perMinute(1)));
        RequestLimiter requests = RequestLimiter.builder(deferred)
                .rule(Rule.builder(THREE).build())
                .rule(Rule.builder(one).key(ClientKey.constant("all")).build())
                .rule(Rule.builder(GLOBAL).key(ClientKey.constant("all")).build())
                .build();

        RequestDecision first = decide(requests, TestRequest.get("/"));
        RequestDecision second = decide(requests, TestRequest.get("/"));

        assertThat(first.allowed()).isTrue();
        assertThat(first.outcomes()).hasSize(3);
        assertThat(second.allowed()).isFalse();
        assertThat(second.outcomes()).extracting(o -> o.rule().policy().name()).containsExactly("per-ip", "one");
        assertThat(deferred.calls()).isEqualTo(5);
    }

    @Test
    void aDryRunRefusalDoesNotEndTheCheck() {
        Policy one = Policy.of("one", Limit.of(1, Rate.perMinute(1)));
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(one).dryRun(true).build())
                .rule(Rule.builder(THREE).build())
                .build();
        decide(requests, TestRequest.get("/"));

        RequestDecision second = decide(requests, TestRequest.get("/"));

        assertThat(second.allowed()).isTrue();
        assertThat(second.outcomes()).extracting(o -> o.decision().allowed()).containsExactly(false, true);
    }

    @Test
    void aHugeKeyIsReplacedByItsDigest() {
        Policy perKey = Policy.of("per-key", Limit.of(1, Rate.perMinute(1)));
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(perKey).key(ClientKey.header("X-API-Key")).build())
                .build();
        String huge = "k".repeat(8_000);

        RequestDecision first = decide(requests, TestRequest.get("/").header("X-API-Key", huge));
        RequestDecision again = decide(requests, TestRequest.get("/").header("X-API-Key", huge));
        RequestDecision other = decide(requests, TestRequest.get("/").header("X-API-Key", huge + "!"));

        assertThat(first.outcomes().get(0).key()).startsWith("sha256:").hasSize(50);
        assertThat(again.allowed()).isFalse();
        assertThat(other.allowed()).isTrue();
        assertThat(LimiterArguments.boundedKey("k".repeat(RequestLimiter.MAX_KEY_LENGTH)))
                .isEqualTo("k".repeat(RequestLimiter.MAX_KEY_LENGTH));
    }

    @Test
    void rulesMatchByPathMethodHostAndHeader() {
        Rule writes = Rule.builder(THREE)
                .path("/api/**")
                .methods("post", "PUT")
                .host("API.example.com")
                .requireHeader("X-API-Key")
                .build();

        assertThat(writes.matches(TestRequest.get("/api/x").method("POST").header("X-API-Key", "k")))
                .isTrue();
        assertThat(writes.matches(TestRequest.get("/api/x").method("GET").header("X-API-Key", "k")))
                .isFalse();
        assertThat(writes.matches(TestRequest.get("/api/x").method("POST"))).isFalse();
        assertThat(writes.matches(TestRequest.get("/api/x")
                        .method("POST")
                        .header("X-API-Key", "k")
                        .host("other")))
                .isFalse();
        assertThat(writes.matches(TestRequest.get("/web").method("POST").header("X-API-Key", "k")))
                .isFalse();
    }

    @Test
    void dryRunRulesReportButNeverRefuse() {
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(THREE).dryRun(true).build())
                .build();
        for (int i = 0; i < 3; i++) {
            decide(requests, TestRequest.get("/api"));
        }

        RequestDecision shadow = decide(requests, TestRequest.get("/api"));

        assertThat(shadow.allowed()).isTrue();
        assertThat(shadow.outcomes().get(0).decision().allowed()).isFalse();
        assertThat(shadow.headers())
                .containsEntry("RateLimit", "\"per-ip\";r=0;t=3")
                .doesNotContainKey("Retry-After");
    }

    @Nested
    class MissingKeys {

        private final Policy perKey = Policy.of("per-key", Limit.of(1, Rate.perMinute(1)));

        @Test
        void aRuleIsSkippedByDefault() {
            RequestLimiter requests = RequestLimiter.builder(limiter)
                    .rule(Rule.builder(perKey)
                            .key(ClientKey.header("X-API-Key"))
                            .build())
                    .build();

            RequestDecision decision = decide(requests, TestRequest.get("/api"));

            assertThat(decision.allowed()).isTrue();
            assertThat(decision.outcomes()).isEmpty();
        }

        @Test
        void aFallbackKeyStandsIn() {
            RequestLimiter requests = RequestLimiter.builder(limiter)
                    .rule(Rule.builder(perKey)
                            .key(ClientKey.header("X-API-Key"))
                            .onMissingKey(MissingKey.fallback(ClientKey.ip()))
                            .build())
                    .build();

            RequestDecision decision = decide(requests, TestRequest.get("/api"));

            assertThat(decision.outcomes())
                    .singleElement()
                    .satisfies(o -> assertThat(o.key()).isEqualTo("ip:203.0.113.7"));
        }

        @Test
        void aRejectionAnswersWithItsStatusAndAProblemBody() {
            RequestLimiter requests = RequestLimiter.builder(limiter)
                    .rule(Rule.builder(perKey)
                            .key(ClientKey.header("X-API-Key"))
                            .onMissingKey(MissingKey.reject(401))
                            .build())
                    .build();

            RequestDecision decision = decide(requests, TestRequest.get("/api"));

            assertThat(decision.allowed()).isFalse();
            assertThat(decision.status()).isEqualTo(401);
            assertThat(new String(decision.body(), StandardCharsets.UTF_8))
                    .contains("\"title\":\"Unauthorized\"", "must carry header:X-API-Key");
        }

        @Test
        void rejectsAStatusThatIsNotAClientError() {
            assertThatThrownBy(() -> MissingKey.reject(500)).isInstanceOf(IllegalArgumentException.class);
            assertThat(MissingKey.parse("reject:400")).isEqualTo(MissingKey.reject(400));
            assertThat(MissingKey.parse("fallback:ip")).isEqualTo(MissingKey.fallback(ClientKey.ip()));
            assertThatThrownBy(() -> MissingKey.parse("deny"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'deny'");
        }
    }

    @Test
    void optionalHeadersAndStatusAreConfigurable() {
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(Policy.of("one", Limit.of(1, Rate.perHour(1))))
                        .build())
                .legacyHeaders(true)
                .refusalStatus(503)
                .problemType("https://example.com/problems/rate-limited")
                .build();
        decide(requests, TestRequest.get("/"));

        RequestDecision refused = decide(requests, TestRequest.get("/"));

        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.headers()).containsKeys("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset");
        assertThat(new String(refused.body(), StandardCharsets.UTF_8))
                .contains(
                        "\"type\":\"https://example.com/problems/rate-limited\"", "\"title\":\"Service Unavailable\"");
    }

    @Test
    void aDegradedDecisionIsShownOnlyWhenConfigured() {
        DegradedLimiter degraded = new DegradedLimiter(FailurePolicy.ALLOW);
        RequestLimiter silent = RequestLimiter.builder(degraded)
                .rule(Rule.builder(THREE).build())
                .build();
        RequestLimiter telling = RequestLimiter.builder(degraded)
                .rule(Rule.builder(THREE).build())
                .degradedHeader(true)
                .build();

        assertThat(decide(silent, TestRequest.get("/")).headers()).doesNotContainKey("Tollgate-Degraded");
        assertThat(decide(telling, TestRequest.get("/")).headers())
                .containsEntry("Tollgate-Degraded", "\"per-ip\";cause=timeout;fallback=allow");
    }

    @Test
    void aRefusalBecauseTheLimiterFailsClosedIs503ThatSaysTheLimiterIsUnavailable() {
        RequestLimiter requests = RequestLimiter.builder(new DegradedLimiter(FailurePolicy.DENY))
                .rule(Rule.builder(THREE).build())
                .build();

        RequestDecision refused = decide(requests, TestRequest.get("/"));

        assertThat(refused.allowed()).isFalse();
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.headers())
                .containsEntry("Retry-After", "1")
                .containsEntry("Content-Type", "application/problem+json");
        assertThat(new String(refused.body(), StandardCharsets.UTF_8))
                .isEqualTo("{\"type\":\"urn:tollgate:limiter-unavailable\",\"title\":\"Rate limiter unavailable\","
                        + "\"status\":503,\"detail\":\"The rate limiter cannot decide for per-ip and refuses requests"
                        + " until it can; retry in 1 s.\",\"policies\":[\"per-ip\"],\"retry_after\":1}");
    }

    @Test
    void theStatusOfAnUnavailableLimiterIsConfigurableApartFromARefusals() {
        RequestLimiter requests = RequestLimiter.builder(new DegradedLimiter(FailurePolicy.DENY))
                .rule(Rule.builder(THREE).build())
                .refusalStatus(420)
                .unavailableStatus(500)
                .build();

        assertThat(decide(requests, TestRequest.get("/")).status()).isEqualTo(500);
        assertThatThrownBy(() -> RequestLimiter.builder(limiter).unavailableStatus(200))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unavailable status must be 4xx or 5xx, was 200");
    }

    @Test
    void aClientOverItsLimitIsToldSoEvenIfAnotherRuleCouldNotDecide() {
        RequestLimiter requests = RequestLimiter.builder(limiter).build();
        Rule unavailable = Rule.builder(GLOBAL).build();
        Rule perIp = Rule.builder(THREE).build();
        Decision failedClosed = new DegradedLimiter(FailurePolicy.DENY).tryAcquire("all", GLOBAL);
        Decision overLimit = new Decision(false, THREE.limits().get(0), 0, 0, 2_000_000, 3_000_000);

        RequestDecision answer = requests.respond(
                List.of(new RuleOutcome(unavailable, "all", failedClosed), new RuleOutcome(perIp, "ip:1", overLimit)));

        assertThat(answer.status()).isEqualTo(429);
        assertThat(answer.headers()).containsEntry("Retry-After", "2");
        assertThat(new String(answer.body(), StandardCharsets.UTF_8)).contains("\"title\":\"Too Many Requests\"");
    }

    @Test
    void outcomesDecidedElsewhereAreAnsweredAsTheRulesAnswer() {
        RequestLimiter requests =
                RequestLimiter.builder(limiter).legacyHeaders(true).build();
        Rule perUser = Rule.builder(THREE).build();
        Rule global = Rule.builder(GLOBAL).build();

        RuleOutcome first = requests.check(perUser, "user:42");
        requests.check(perUser, "user:42");
        requests.check(perUser, "user:42");
        RuleOutcome refused = requests.check(perUser, "user:42");
        RequestDecision allowed = requests.respond(List.of(first));
        RequestDecision answer = requests.respond(List.of(requests.check(global, "all"), refused));

        assertThat(allowed.allowed()).isTrue();
        assertThat(allowed.headers())
                .containsEntry("RateLimit", "\"per-ip\";r=2;t=1")
                .containsKey("X-RateLimit-Limit");
        assertThat(answer.allowed()).isFalse();
        assertThat(answer.status()).isEqualTo(429);
        assertThat(answer.headers())
                .containsEntry("Retry-After", "1")
                .containsEntry("RateLimit", "\"global\";r=999;t=1, \"per-ip\";r=0;t=3");
        assertThat(new String(answer.body(), StandardCharsets.UTF_8)).contains("\"policies\":[\"per-ip\"]");
        assertThatThrownBy(() -> requests.respond(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aDecisionOfAPolicyAloneIsAnsweredExactlyAsARuleOfThatPolicy() {
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .legacyHeaders(true)
                .degradedHeader(true)
                .refusalStatus(420)
                .problemType("https://example.com/problems/rate-limited")
                .build();
        Rule perIp = Rule.builder(THREE).build();
        Decision allowed = limiter.tryAcquire("ip:1", THREE, 2);
        Decision refused = limiter.tryAcquire("ip:1", THREE, 2);
        Decision failedOpen = new DegradedLimiter(FailurePolicy.ALLOW).tryAcquire("ip:1", THREE);
        Decision failedClosed = new DegradedLimiter(FailurePolicy.DENY).tryAcquire("ip:1", THREE);

        for (Decision decision : List.of(allowed, refused, failedOpen, failedClosed)) {
            RequestDecision alone = requests.respond(THREE, decision);
            RequestDecision byRule = requests.respond(List.of(new RuleOutcome(perIp, "ip:1", decision)));

            assertThat(alone.allowed()).isEqualTo(byRule.allowed()).isEqualTo(decision.allowed());
            assertThat(alone.status()).isEqualTo(byRule.status());
            assertThat(alone.headers()).containsExactlyEntriesOf(byRule.headers());
            assertThat(alone.body()).isEqualTo(byRule.body());
            assertThat(alone.outcomes()).isEmpty();
        }
        assertThat(requests.respond(THREE, refused).status()).isEqualTo(420);
        assertThat(requests.respond(THREE, failedClosed).status()).isEqualTo(503);
        assertThat(requests.respond(THREE, failedOpen).headers())
                .containsEntry("Tollgate-Degraded", "\"per-ip\";cause=timeout;fallback=allow");
    }

    @Test
    void aRuleCheckedWithoutWaitingChargesAndRefusesAsTheWaitingCheck() {
        RequestLimiter requests = RequestLimiter.builder(limiter).build();
        Rule perUser = Rule.builder(THREE).build();

        List<RuleOutcome> outcomes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            outcomes.add(
                    requests.checkAsync(perUser, "user:7").toCompletableFuture().join());
        }

        assertThat(outcomes).extracting(RuleOutcome::refuses).containsExactly(false, false, false, true);
        assertThat(outcomes.get(3).key()).isEqualTo("user:7");
        assertThat(requests.check(perUser, "user:7").refuses()).isTrue();
        assertThatThrownBy(() -> requests.checkAsync(perUser, "")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theRefusalBodyCanBeReplaced() {
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(THREE).build())
                .refusalStatus(503)
                .refusalBody(
                        "text/plain; charset=utf-8",
                        refusal -> "slow down: " + refusal.policies() + ", back in " + refusal.retryAfterSeconds()
                                + " s (" + refusal.status() + ")")
                .build();
        for (int i = 0; i < 3; i++) {
            decide(requests, TestRequest.get("/"));
        }

        RequestDecision refused = decide(requests, TestRequest.get("/"));

        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.headers())
                .containsEntry("Content-Type", "text/plain; charset=utf-8")
                .containsEntry("Retry-After", "1");
        assertThat(new String(refused.body(), StandardCharsets.UTF_8))
                .isEqualTo("slow down: [per-ip], back in 1 s (503)");
    }

    @Test
    void metricsCountEveryRulesOutcomeIncludingWhatADryRunWouldHaveRefused() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Policy one = Policy.of("one", Limit.of(1, Rate.perMinute(1)));
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(one).dryRun(true).build())
                .rule(Rule.builder(THREE).build())
                .rule(Rule.builder(GLOBAL)
                        .key(ClientKey.header("X-API-Key"))
                        .onMissingKey(MissingKey.reject(401))
                        .path("/keyed/**")
                        .build())
                .metrics(MicrometerRequestMetrics.of(registry))
                .build();

        for (int i = 0; i < 4; i++) {
            decide(requests, TestRequest.get("/"));
        }
        decide(requests, TestRequest.get("/keyed/x"));

        assertThat(count(registry, "one", "allowed", "true")).isEqualTo(1);
        assertThat(count(registry, "one", "refused", "true")).isEqualTo(3);
        assertThat(count(registry, "per-ip", "allowed", "false")).isEqualTo(3);
        assertThat(count(registry, "per-ip", "refused", "false")).isEqualTo(1);
        assertThat(registry.get("tollgate.http.missing_key")
                        .tags("policy", "global", "action", "reject")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    private static double count(SimpleMeterRegistry registry, String policy, String outcome, String dryRun) {
        return registry.get("tollgate.http.decisions")
                .tags("policy", policy, "outcome", outcome, "dry_run", dryRun, "degraded", "false")
                .counter()
                .count();
    }

    private static RequestDecision decide(RequestLimiter requests, TestRequest request) {
        return requests.decide(request).toCompletableFuture().join();
    }
}
