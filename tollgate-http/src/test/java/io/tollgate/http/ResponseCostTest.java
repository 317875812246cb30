package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.FailurePolicy;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.LimiterOfItsOwn;
import io.tollgate.fixtures.ManualTimeSource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Settling a request's cost once its response is known: what {@link ResponseCost} says, and how it lands. */
class ResponseCostTest {

    private static final Function<String, String> NO_HEADERS = name -> null;

    @Nested
    class WhatARequestCostsInTheEnd {

        @Test
        void aHeaderGivesTheWholeCost() {
            ResponseCost cost = ResponseCost.fromHeader("X-Tokens-Used");

            assertThat(cost.finalCost(1, 200, Map.of("X-Tokens-Used", "1500")::get))
                    .isEqualTo(1500);
            assertThat(cost.finalCost(10, 200, Map.of("X-Tokens-Used", " 0 ")::get))
                    .isZero();
        }

        @ParameterizedTest
        @ValueSource(strings = {"", "abc", "-3", "1.5", "+7", "99999999999999999"})
        void aHeaderThatIsNoWholeNumberKeepsTheCostTaken(String value) {
            ResponseCost cost = ResponseCost.fromHeader("X-Tokens-Used");

            assertThat(cost.finalCost(4, 200, Map.of("X-Tokens-Used", value)::get))
                    .isEqualTo(4);
            assertThat(cost.finalCost(4, 200, NO_HEADERS)).isEqualTo(4);
        }

        @Test
        void onlyTheChargedStatusesCostAnything() {
            ResponseCost failedLogins = ResponseCost.onlyForStatuses("401", "403");

            assertThat(failedLogins.finalCost(1, 401, NO_HEADERS)).isEqualTo(1);
            assertThat(failedLogins.finalCost(1, 403, NO_HEADERS)).isEqualTo(1);
            assertThat(failedLogins.finalCost(1, 200, NO_HEADERS)).isZero();
            assertThat(failedLogins.finalCost(1, 404, NO_HEADERS)).isZero();
        }

        @Test
        void refundedStatusesCostNothingAndAClassCoversItsHundred() {
            ResponseCost notOurFailures =
                    ResponseCost.fromHeader("X-Tokens-Used").refunding("5xx");

            assertThat(notOurFailures.finalCost(1, 500, Map.of("X-Tokens-Used", "80")::get))
                    .isZero();
            assertThat(notOurFailures.finalCost(1, 599, NO_HEADERS)).isZero();
            assertThat(notOurFailures.finalCost(1, 404, Map.of("X-Tokens-Used", "80")::get))
                    .isEqualTo(80);
        }

        @Test
        void badSettingsAreRefusedNamingTheValue() {
            assertThatThrownBy(() -> ResponseCost.fromHeader("X Tokens"))
                    .hasMessage("a response cost header must be a header name, was 'X Tokens'");
            assertThatThrownBy(() -> ResponseCost.onlyForStatuses("4x1"))
                    .hasMessage(
                            "charge-statuses: a status is a code from 100 to 599 or a class such as 5xx, was '4x1'");
            assertThatThrownBy(() -> ResponseCost.refundForStatuses("600")).hasMessageContaining("was '600'");
            assertThatThrownBy(ResponseCost::onlyForStatuses)
                    .hasMessage("give at least one status, such as 401 or 5xx");
            assertThatThrownBy(() -> ResponseCost.onlyForStatuses("401").refunding("5xx"))
                    .hasMessage(
                            "give charge-statuses (only they cost) or refund-statuses (they cost nothing), not both");
            assertThat(ResponseCost.none().settles()).isFalse();
            assertThat(ResponseCost.refundForStatuses("5XX").refundStatuses()).containsExactly("5xx");
        }
    }

    @Nested
    class SettlingARequest {

        /** 10 tokens, one a second: the seconds until full count the tokens missing. */
        private final Policy tenPerTenSeconds = Policy.of("llm", Limit.of(10, Rate.perSecond(1)));

        private final ManualTimeSource time = new ManualTimeSource();
        private final InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(time).build();
        private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

        private RequestLimiter requests(Rule... rules) {
            return RequestLimiter.builder(limiter)
                    .rules(List.of(rules))
                    .metrics(MicrometerRequestMetrics.of(registry))
                    .build();
        }

        private RequestDecision decide(RequestLimiter requests) {
            return requests.decide(TestRequest.get("/v1/completions"))
                    .toCompletableFuture()
                    .join();
        }

        private void settle(
                RequestLimiter requests, RequestDecision decision, int status, Map<String, String> headers) {
            requests.settle(decision, status, headers::get)
                    .toCompletableFuture()
                    .join();
        }

        private Duration untilFull(Policy policy) {
            return limiter.inspect("ip:203.0.113.7", policy).untilFull();
        }

        @Test
        void aHeaderChargesWhatTheResponseCostBeyondWhatWasTaken() {
            RequestLimiter requests = requests(Rule.builder(tenPerTenSeconds)
                    .responseCost(ResponseCost.fromHeader("X-Tokens-Used"))
                    .build());

            RequestDecision decision = decide(requests);
            settle(requests, decision, 200, Map.of("X-Tokens-Used", "4"));

            assertThat(decision.settlesAfterResponse()).isTrue();
            assertThat(untilFull(tenPerTenSeconds)).isEqualTo(Duration.ofSeconds(4));
            assertThat(registry.get("tollgate.http.settled_tokens")
                            .tag("policy", "llm")
                            .tag("action", "charged")
                            .counter()
                            .count())
                    .isEqualTo(3);
        }

        @Test
        void aHeaderBelowTheCostTakenGivesTheRestBack() {
            RequestLimiter requests = requests(Rule.builder(tenPerTenSeconds)
                    .cost(5)
                    .responseCost(ResponseCost.fromHeader("X-Tokens-Used"))
                    .build());

            settle(requests, decide(requests), 200, Map.of("X-Tokens-Used", "2"));

            assertThat(untilFull(tenPerTenSeconds)).isEqualTo(Duration.ofSeconds(2));
            assertThat(registry.get("tollgate.http.settled_tokens")
                            .tag("action", "refunded")
                            .counter()
                            .count())
                    .isEqualTo(3);
        }

        @Test
        void aResponseThatCostMoreThanTheBucketHoldsLeavesItInDebtAndTheNextRequestWaitsItOut() {
            RequestLimiter requests = requests(Rule.builder(tenPerTenSeconds.withMaxDebt(Duration.ofSeconds(30)))
                    .responseCost(ResponseCost.fromHeader("X-Tokens-Used"))
                    .build());

            RequestDecision first = decide(requests);
            settle(requests, first, 200, Map.of("X-Tokens-Used", "25"));
            RequestDecision next = decide(requests);
            time.advance(Duration.ofSeconds(16));
            RequestDecision afterTheDebt = decide(requests);

            assertThat(first.headers()).containsEntry("RateLimit", "\"llm\";r=9;t=1");
            assertThat(next.allowed()).isFalse();
            assertThat(next.headers()).containsEntry("Retry-After", "16");
            assertThat(afterTheDebt.allowed()).isTrue();
        }

        @Test
        void aResponseClaimingAHugeCostKeepsItsClientOutForThePolicysMaxDebtAtMost() {
            RequestLimiter requests = requests(Rule.builder(tenPerTenSeconds)
                    .responseCost(ResponseCost.fromHeader("X-Tokens-Used"))
                    .build());

            settle(requests, decide(requests), 200, Map.of("X-Tokens-Used", "100000000"));
            RequestDecision next = decide(requests);
            time.advance(Duration.ofSeconds(11));
            RequestDecision afterTheDebt = decide(requests);

            // the default maximum debt: the 10 s the bucket takes to fill; then one token
            assertThat(next.headers()).containsEntry("Retry-After", "11");
            assertThat(afterTheDebt.allowed()).isTrue();
        }

        @Test
        void onlyFailedLoginsCount() {
            Policy logins = Policy.of("logins", Limit.of(3, Rate.perHour(3)));
            RequestLimiter requests = requests(Rule.builder(logins)
                    .responseCost(ResponseCost.onlyForStatuses("401", "403"))
                    .build());

            for (int i = 0; i < 10; i++) {
                settle(requests, decide(requests), 200, Map.of());
            }
            for (int i = 0; i < 3; i++) {
                settle(requests, decide(requests), 401, Map.of());
            }
            RequestDecision fourthFailure = decide(requests);

            assertThat(fourthFailure.allowed()).isFalse();
            assertThat(fourthFailure.status()).isEqualTo(429);
        }

        @Test
        void aServerErrorIsRefunded() {
            RequestLimiter requests = requests(Rule.builder(tenPerTenSeconds)
                    .cost(2)
                    .responseCost(ResponseCost.refundForStatuses("5xx"))
                    .build());

            settle(requests, decide(requests), 503, Map.of());
            assertThat(untilFull(tenPerTenSeconds)).isZero();

            settle(requests, decide(requests), 404, Map.of());
            assertThat(untilFull(tenPerTenSeconds)).isEqualTo(Duration.ofSeconds(2));
        }

        @Test
        void aRequestRefusedByALaterRuleIsSettledWithTheRefusalsStatus() {
            Policy logins = Policy.of("logins", Limit.of(3, Rate.perHour(3)));
            Policy closed = Policy.of("closed", Limit.of(1, Rate.perHour(1)));
            limiter.tryAcquire("constant:all", closed, 1);
            RequestLimiter requests = requests(
                    Rule.builder(logins)
                            .responseCost(ResponseCost.onlyForStatuses("401"))
                            .build(),
                    Rule.builder(closed).key(ClientKey.constant("all")).build());

            RequestDecision refused = decide(requests);
            settle(requests, refused, refused.status(), refused.headers());

            assertThat(refused.allowed()).isFalse();
            assertThat(refused.settlesAfterResponse()).isTrue();
            assertThat(untilFull(logins)).isZero();
        }

        @Test
        void aRuleThatRefusedTookNothingAndSettlesNothing() {
            RequestLimiter requests = requests(Rule.builder(tenPerTenSeconds)
                    .cost(10)
                    .responseCost(ResponseCost.refundForStatuses("4xx"))
                    .build());
            decide(requests);

            RequestDecision refused = decide(requests);
            settle(requests, refused, 429, Map.of());

            assertThat(refused.settlesAfterResponse()).isFalse();
            assertThat(untilFull(tenPerTenSeconds)).isEqualTo(Duration.ofSeconds(10));
        }

        @Test
        void aDecisionTheFailurePolicyMadeTookNothingToSettle() {
            RequestLimiter requests = RequestLimiter.builder(new DegradedLimiter(FailurePolicy.ALLOW))
                    .rule(Rule.builder(tenPerTenSeconds)
                            .responseCost(ResponseCost.fromHeader("X-Tokens-Used"))
                            .build())
                    .build();

            RequestDecision degraded = decide(requests);

            assertThat(degraded.allowed()).isTrue();
            assertThat(degraded.settlesAfterResponse()).isFalse();
        }

        @Test
        void aLimiterThatCannotChargeLosesTheSettlementButNeverFailsTheResponse() {
            RateLimiter decidesOnly = new LimiterOfItsOwn(limiter, "decides only");
            RequestLimiter requests = RequestLimiter.builder(decidesOnly)
                    .rule(Rule.builder(tenPerTenSeconds)
                            .responseCost(ResponseCost.fromHeader("X-Tokens-Used"))
                            .build())
                    .metrics(MicrometerRequestMetrics.of(registry))
                    .build();

            settle(requests, decide(requests), 200, Map.of("X-Tokens-Used", "7"));

            assertThat(untilFull(tenPerTenSeconds)).isEqualTo(Duration.ofSeconds(1));
            assertThat(registry.get("tollgate.http.settled_tokens")
                            .tag("action", "lost")
                            .counter()
                            .count())
                    .isEqualTo(6);
        }

        @Test
        void aRuleWithoutAResponseCostSettlesNothing() {
            RequestLimiter requests = requests(Rule.builder(tenPerTenSeconds).build());

            RequestDecision decision = decide(requests);
            settle(requests, decision, 500, Map.of("X-Tokens-Used", "9"));

            assertThat(decision.settlesAfterResponse()).isFalse();
            assertThat(untilFull(tenPerTenSeconds)).isEqualTo(Duration.ofSeconds(1));
        }
    }
}
