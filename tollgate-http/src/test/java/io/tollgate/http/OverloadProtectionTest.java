package io.tollgate.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Priority;
import io.tollgate.Rate;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Overload protection in front of the rules: a request is admitted at its priority before any bucket is charged,
 * refused with a 503 of its own when there is no room, and holds its room until its response ends.
 */
class OverloadProtectionTest {

    private final InMemoryRateLimiter limiter = InMemoryRateLimiter.create();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Policy free = Policy.of("free", Limit.of(10, Rate.perMinute(10)));
    private final Policy gold = Policy.of("gold", Limit.of(10, Rate.perMinute(10)));

    /** A limit of 10 that does not move; a tenth kept for critical requests and a fifth more from sheddable ones. */
    private final OverloadProtection protection = new OverloadProtection(
            new OverloadProtection.Settings(10, 10, 10, 0.1, 0.2, Duration.ZERO, Duration.ofSeconds(2)));

    private RequestLimiter requests(Rule... rules) {
        return RequestLimiter.builder(limiter)
                .rules(List.of(rules))
                .overload(protection)
                .priority("gold", Priority.CRITICAL)
                .metrics(MicrometerRequestMetrics.of(registry))
                .build();
    }

    private static RequestDecision decide(RequestLimiter requests, TestRequest request) {
        return requests.decide(request).toCompletableFuture().join();
    }

    @Test
    void aRequestRefusedForOverloadIsAnswered503WithRetryAfterAndTakesNoTokens() {
        RequestLimiter requests = requests(Rule.builder(free)
                .key(ClientKey.ip())
                .priority(Priority.SHEDDABLE)
                .build());
        List<RequestDecision> admitted = new ArrayList<>();
        for (int i = 0; i < 7; i++) { // sheddable requests may fill seven tenths of the limit
            admitted.add(decide(requests, TestRequest.get("/a").from("198.51.100." + i)));
        }

        RequestDecision shed = decide(requests, TestRequest.get("/a"));

        assertThat(admitted)
                .allSatisfy(decision -> assertThat(decision.allowed()).isTrue());
        assertThat(shed.allowed()).isFalse();
        assertThat(shed.status()).isEqualTo(503);
        assertThat(shed.headers())
                .containsEntry("Retry-After", "2")
                .containsEntry("Cache-Control", "no-store")
                .containsEntry("Content-Type", "application/problem+json")
                .doesNotContainKey("RateLimit");
        assertThat(new String(shed.body(), StandardCharsets.UTF_8))
                .isEqualTo("{\"type\":\"urn:tollgate:overloaded\",\"title\":\"Service overloaded\",\"status\":503,"
                        + "\"detail\":\"The service is overloaded and serves the most important requests first (this"
                        + " one is sheddable); retry in 2 s.\",\"retry_after\":2}");
        assertThat(shed.overload()).isNull();
        assertThat(limiter.tryAcquire("ip:203.0.113.7", free, 10).allowed())
                .as("the shed client's bucket is still full")
                .isTrue();
    }

    @Test
    void anAdmittedRequestHoldsItsRoomUntilItsResponseEnds() {
        RequestLimiter requests = requests(Rule.builder(free).build());

        RequestDecision decision = decide(requests, TestRequest.get("/a"));

        assertThat(decision.allowed()).isTrue();
        assertThat(decision.settlesAfterResponse()).isTrue();
        assertThat(decision.overload().priority()).isEqualTo(Priority.DEFAULT);
        assertThat(protection.inFlight()).isEqualTo(1);
        requests.finish(decision, 200, name -> null);
        requests.finish(decision, 200, name -> null);
        assertThat(protection.inFlight()).isZero();
    }

    @Test
    void aRequestRefusedByItsBucketGivesItsRoomBackAtOnce() {
        RequestLimiter requests = requests(
                Rule.builder(Policy.of("one", Limit.of(1, Rate.perMinute(1)))).build());
        RequestDecision first = decide(requests, TestRequest.get("/a"));

        RequestDecision second = decide(requests, TestRequest.get("/a"));

        assertThat(second.status()).isEqualTo(429);
        assertThat(second.overload()).isNull();
        assertThat(protection.inFlight()).as("only the first holds room").isEqualTo(1);
        requests.release(first);
        assertThat(protection.inFlight()).isZero();
    }

    @Test
    void aRequestNoRuleAppliesToIsAdmittedAsDefault() {
        RequestLimiter requests =
                requests(Rule.builder(free).path("/limited/**").build());
        for (int i = 0; i < 9; i++) {
            decide(requests, TestRequest.get("/open"));
        }

        RequestDecision tenth = decide(requests, TestRequest.get("/open"));

        assertThat(tenth.status())
                .as("default requests leave the critical reserve")
                .isEqualTo(503);
        assertThat(protection.inFlight()).isEqualTo(9);
    }

    @Test
    void theRulesPriorityComesFirstThenThePlansThenDefault() {
        Rule plans = Rule.builder(free)
                .path("/api/**")
                .key(ClientKey.header("X-Api-Key"))
                .policyFrom(PolicySource.header("X-Plan"), Map.of("gold", gold, "free", free))
                .build();
        Rule background = Rule.builder(gold)
                .path("/batch/**")
                .priority(Priority.SHEDDABLE)
                .build();
        RequestLimiter requests = requests(plans, background);

        assertThat(priorityOf(
                        requests,
                        TestRequest.get("/api/x").header("X-Api-Key", "k1").header("X-Plan", "gold")))
                .isEqualTo(Priority.CRITICAL);
        assertThat(priorityOf(
                        requests,
                        TestRequest.get("/api/x").header("X-Api-Key", "k2").header("X-Plan", "free")))
                .isEqualTo(Priority.DEFAULT);
        assertThat(priorityOf(requests, TestRequest.get("/batch/run")))
                .as("the rule's own, though its policy is critical")
                .isEqualTo(Priority.SHEDDABLE);
    }

    @Test
    void aRequestSeveralRulesApplyToTakesTheHighestOfTheirPriorities() {
        RequestLimiter requests = requests(
                Rule.builder(free).priority(Priority.SHEDDABLE).build(),
                Rule.builder(free)
                        .key(ClientKey.header("X-User"))
                        .priority(Priority.CRITICAL)
                        .build());

        assertThat(priorityOf(requests, TestRequest.get("/a").header("X-User", "u1")))
                .isEqualTo(Priority.CRITICAL);
        assertThat(priorityOf(requests, TestRequest.get("/a"))).isEqualTo(Priority.SHEDDABLE);
    }

    @Test
    void failuresOfTheServiceLowerTheLimitAndAClientThatWentAwayTeachesNothing() {
        OverloadProtection learning = new OverloadProtection(
                new OverloadProtection.Settings(1, 20, 100, 0.1, 0.2, Duration.ZERO, Duration.ofSeconds(1)));
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(free).build())
                .overload(learning)
                .build();

        for (int status : new int[] {500, 502, 503, 504}) {
            RequestDecision decision = decide(requests, TestRequest.get("/a").from("198.51.100." + status % 100));
            requests.finish(decision, status, name -> null);
        }
        int afterFailures = learning.limit();
        RequestDecision gone = decide(requests, TestRequest.get("/a").from("198.51.100.99"));
        requests.release(gone); // never settled: its client went away before any answer

        assertThat(afterFailures).isEqualTo(13); // 20 x 0.9^4
        assertThat(learning.limit()).isEqualTo(13);
        assertThat(learning.inFlight()).isZero();
    }

    @Test
    void aRequestWaitsForRoomAndIsAdmittedWhenAResponseEnds() throws Exception {
        OverloadProtection waiting = oneInFlight(Duration.ofSeconds(5));
        RequestLimiter requests = perUser(waiting);
        RequestDecision first = decide(requests, TestRequest.get("/a").header("X-User", "first"));

        CompletableFuture<RequestDecision> second = requests.decide(
                        TestRequest.get("/a").header("X-User", "second"))
                .toCompletableFuture();
        assertThat(second).isNotDone();
        requests.finish(first, 200, name -> null);

        RequestDecision admitted = second.get(5, TimeUnit.SECONDS); // it goes on on the expiry thread
        assertThat(admitted.allowed()).isTrue();
        assertThat(admitted.headers().get("RateLimit"))
                .as("its bucket charged once admitted")
                .contains(";r=9;");
        assertThat(waiting.inFlight()).isEqualTo(1);
        assertThat(waiting.waiting()).isZero();
    }

    @Test
    void aRequestThatWaitedTooLongIsRefusedWithoutTakingTokens() {
        OverloadProtection waiting = oneInFlight(Duration.ofMillis(20));
        RequestLimiter requests = perUser(waiting);
        RequestDecision first = decide(requests, TestRequest.get("/a").header("X-User", "first"));

        RequestDecision second = decide(requests, TestRequest.get("/a").header("X-User", "second"));
        RequestDecision third = decide(requests, TestRequest.get("/a").header("X-User", "second"));
        requests.finish(first, 200, name -> null);
        RequestDecision fourth = decide(requests, TestRequest.get("/a").header("X-User", "second"));

        assertThat(second.status()).isEqualTo(503);
        assertThat(third.status()).isEqualTo(503);
        assertThat(waiting.waiting()).isZero();
        assertThat(fourth.headers().get("RateLimit"))
                .as("the two refused took nothing")
                .contains(";r=9;");
    }

    @Test
    void countsAdmittedAndShedRequestsByPriorityAndShowsTheLimit() {
        RequestLimiter requests =
                requests(Rule.builder(free).priority(Priority.SHEDDABLE).build());
        for (int i = 0; i < 8; i++) {
            decide(requests, TestRequest.get("/a").from("198.51.100." + i));
        }

        assertThat(registry.get("tollgate.http.overload.requests")
                        .tag("priority", "sheddable")
                        .tag("outcome", "admitted")
                        .counter()
                        .count())
                .isEqualTo(7);
        assertThat(registry.get("tollgate.http.overload.requests")
                        .tag("priority", "sheddable")
                        .tag("outcome", "shed")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("tollgate.http.overload.limit").gauge().value()).isEqualTo(10);
        assertThat(registry.get("tollgate.http.overload.in_flight").gauge().value())
                .isEqualTo(7);
        assertThat(registry.get("tollgate.http.overload.waiting").gauge().value())
                .isZero();
    }

    @Test
    void namesABadSetting() {
        assertThatThrownBy(
                        () -> new OverloadProtection.Settings(5, 4, 10, 0.1, 0.2, Duration.ZERO, Duration.ofSeconds(1)))
                .hasMessage("overload limits must be 1 <= min-limit <= initial-limit <= max-limit, were 5, 4 and 10");
        assertThatThrownBy(
                        () -> new OverloadProtection.Settings(1, 4, 10, 0.6, 0.5, Duration.ZERO, Duration.ofSeconds(1)))
                .hasMessage("critical-reserve and default-reserve must be at most 1 together, were 0.6 and 0.5");
        assertThatThrownBy(() -> new OverloadProtection.Settings(
                        1, 4, 10, 0.1, 0.2, Duration.ofMillis(-1), Duration.ofSeconds(1)))
                .hasMessage("max-wait must not be negative, was PT-0.001S");
        assertThatThrownBy(() -> new OverloadProtection.Settings(1, 4, 10, 0.1, 0.2, Duration.ZERO, Duration.ZERO))
                .hasMessage("retry-after must be positive, was PT0S");
    }

    /** Protection with a limit of one request in flight that does not move, a request waiting at most maxWait. */
    private static OverloadProtection oneInFlight(Duration maxWait) {
        return new OverloadProtection(new OverloadProtection.Settings(1, 1, 1, 0, 0, maxWait, Duration.ofSeconds(1)));
    }

    /** One rule charging each user (X-User) the free policy, behind {@code protection}. */
    private RequestLimiter perUser(OverloadProtection protection) {
        return RequestLimiter.builder(limiter)
                .rule(Rule.builder(free).key(ClientKey.header("X-User")).build())
                .overload(protection)
                .build();
    }

    private Priority priorityOf(RequestLimiter requests, TestRequest request) {
        RequestDecision decision = decide(requests, request);
        assertThat(decision.allowed()).isTrue();
        requests.release(decision);
        return decision.overload().priority();
    }
}
