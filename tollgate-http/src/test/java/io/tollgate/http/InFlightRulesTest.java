package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.FailurePolicy;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Rules with a concurrency limit: a request holds a slot of its client's until it is released. */
class InFlightRulesTest {

    private static final String CLIENT = "ip:203.0.113.7";

    private final ConcurrencyLimit exports = ConcurrencyLimit.of("exports", 2);
    private final InMemoryRateLimiter limiter = InMemoryRateLimiter.create();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private RequestLimiter requests(Rule... rules) {
        return RequestLimiter.builder(limiter)
                .rules(List.of(rules))
                .metrics(MicrometerRequestMetrics.of(registry))
                .build();
    }

    private static RequestDecision decide(RequestLimiter requests) {
        return requests.decide(TestRequest.get("/reports/export"))
                .toCompletableFuture()
                .join();
    }

    @Test
    void refusesWhileEverySlotIsTakenAndLetsTheNextInOnceOneIsReleased() {
        RequestLimiter requests = requests(Rule.builder(exports).build());

        RequestDecision first = decide(requests);
        RequestDecision second = decide(requests);
        RequestDecision third = decide(requests);
        requests.release(first);
        RequestDecision fourth = decide(requests);

        assertThat(List.of(first.allowed(), second.allowed(), third.allowed(), fourth.allowed()))
                .containsExactly(true, true, false, true);
        assertThat(first.headers()).isEmpty();
        assertThat(first.settlesAfterResponse()).isTrue();
        assertThat(third.status()).isEqualTo(429);
        assertThat(third.permits()).isEmpty();
        assertThat(third.headers())
                .containsEntry("Retry-After", "1")
                .containsEntry("Cache-Control", "no-store")
                .containsEntry("Content-Type", "application/problem+json");
        assertThat(new String(third.body(), StandardCharsets.UTF_8))
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Too many requests in flight for exports; retry in 1 s.\","
                        + "\"policies\":[\"exports\"],\"retry_after\":1}");
        assertThat(limiter.inFlight(CLIENT, exports)).isEqualTo(2);
        assertThat(registry.get("tollgate.http.permits")
                        .tags("limit", "exports", "outcome", "refused")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void aRequestRefusedForItsRateHoldsNoSlotAndOneRefusedForItsSlotsTakesNoTokens() {
        Policy twoAnHour = Policy.of("exports-per-hour", Limit.of(2, Rate.perHour(2)));
        ConcurrencyLimit one = ConcurrencyLimit.of("one-export", 1);
        RequestLimiter requests = requests(Rule.builder(twoAnHour).inFlight(one).build());

        RequestDecision running = decide(requests);
        RequestDecision whileRunning = decide(requests);
        requests.release(running);
        RequestDecision second = decide(requests);
        requests.release(second);
        RequestDecision third = decide(requests);

        assertThat(running.headers()).containsEntry("RateLimit", "\"exports-per-hour\";r=1;t=1800");
        assertThat(whileRunning.allowed()).isFalse();
        assertThat(whileRunning.headers()).containsEntry("Retry-After", "1").doesNotContainKey("RateLimit");
        assertThat(second.allowed()).isTrue();
        assertThat(third.allowed()).isFalse();
        assertThat(third.headers()).containsEntry("Retry-After", "1800");
        assertThat(limiter.inFlight(CLIENT, one)).isZero();
    }

    @Test
    void aLaterRulesRefusalGivesTheSlotBack() {
        Policy closed = Policy.of("closed", Limit.of(1, Rate.perHour(1)));
        limiter.tryAcquire("constant:all", closed, 1);
        RequestLimiter requests = requests(
                Rule.builder(exports).build(),
                Rule.builder(closed).key(ClientKey.constant("all")).build());

        RequestDecision refused = decide(requests);

        assertThat(refused.allowed()).isFalse();
        assertThat(refused.permits()).isEmpty();
        assertThat(limiter.inFlight(CLIENT, exports)).isZero();
    }

    @Test
    void aDryRunRuleCountsButNeverRefuses() {
        RequestLimiter requests = requests(
                Rule.builder(ConcurrencyLimit.of("one", 1)).dryRun(true).build());

        RequestDecision first = decide(requests);
        RequestDecision second = decide(requests);

        assertThat(second.allowed()).isTrue();
        assertThat(second.permits()).isEmpty();
        assertThat(first.permits()).hasSize(1);
        assertThat(registry.get("tollgate.http.permits")
                        .tags("outcome", "refused", "dry_run", "true")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void aLimiterThatCannotDecideAndFailsClosedAnswersUnavailable() {
        RequestLimiter requests = RequestLimiter.builder(new DegradedLimiter(FailurePolicy.DENY))
                .rule(Rule.builder(exports).build())
                .build();

        RequestDecision refused = decide(requests);

        assertThat(refused.status()).isEqualTo(503);
        assertThat(new String(refused.body(), StandardCharsets.UTF_8))
                .contains("\"type\":\"urn:tollgate:limiter-unavailable\"", "cannot decide for exports");
    }

    @Test
    void rulesOfConcurrencyLimitsAreReadFromAFile() {
        RequestLimiterConfig config = RequestLimiterConfig.parse("""
                policies: {hourly: {limits: [{capacity: 10, refill: 10/h}]}}
                concurrency-limits:
                  exports: {max-in-flight: 5, lease: 1m}
                rules:
                  - path: /reports/*/export
                    key: header:X-Customer
                    concurrency-limit: exports
                  - policy: hourly
                    concurrency-limit: exports
                """, "t.yaml");

        ConcurrencyLimit fiveExports = new ConcurrencyLimit("exports", 5, Duration.ofMinutes(1));
        assertThat(config.rules().get(0).inFlight()).isEqualTo(fiveExports);
        assertThat(config.rules().get(0).policy()).isNull();
        assertThat(config.rules().get(0).name()).isEqualTo("exports");
        assertThat(config.rules().get(1).inFlight()).isEqualTo(fiveExports);
        assertThat(AdminViews.policies(Map.of(), config.rules()))
                .containsEntry("concurrency-limits", Map.of("exports", Map.of("max-in-flight", 5, "lease", "60000ms")));
    }

    @Test
    void badConcurrencyLimitsAreNamedInTheError() {
        String policies = "policies: {p: {limits: [{capacity: 5, refill: 5/s}]}}\n";

        assertThatThrownBy(() -> RequestLimiterConfig.parse(policies + "rules: [{concurrency-limit: nope}]", "t.yaml"))
                .hasMessage("t.yaml:2: rules[0].concurrency-limit: unknown concurrency limit 'nope'; defined: none");
        assertThatThrownBy(() -> RequestLimiterConfig.parse(policies + "rules: [{path: /x}]", "t.yaml"))
                .hasMessage("t.yaml:2: rules[0].policy: is required, unless the rule names a concurrency-limit");
        assertThatThrownBy(() ->
                        RequestLimiterConfig.parse(policies + "concurrency-limits: {c: {max-in-flight: 0}}", "t.yaml"))
                .hasMessage("t.yaml:2: concurrency-limits.c.max-in-flight: must be 1 to 100000, was 0");
        assertThatThrownBy(() -> RequestLimiterConfig.parse(
                        policies + "concurrency-limits: {c: {max-in-flight: 2, lease: 500ms}}", "t.yaml"))
                .hasMessageStartingWith(
                        "t.yaml:2: concurrency-limits.c.lease: concurrency limit 'c': the lease must be");
        assertThatThrownBy(() -> RequestLimiterConfig.parse(
                        policies + "concurrency-limits: {c: {max-in-flight: 2}}\n"
                                + "rules: [{concurrency-limit: c, response-cost: {header: X-Used}}]",
                        "t.yaml"))
                .hasMessageContaining("a rule without a policy has no cost to settle after the response");
        assertThatThrownBy(() -> RequestLimiter.builder(limiter)
                        .build()
                        .check(Rule.builder(exports).build(), "k"))
                .hasMessage("rule 'exports' limits only requests in flight: decide it with decide(request)");
    }
}
