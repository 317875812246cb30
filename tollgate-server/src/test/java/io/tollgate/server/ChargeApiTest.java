package io.tollgate.server;

import static io.tollgate.server.DecisionApiTest.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.testing.RedisExtension;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code POST /v1/charge} on a real server over loopback: a cost known after the fact puts the bucket in
 * debt, the key's next checks are refused until it has refilled past it; in memory with a manual clock, and
 * on a real Redis, which answers 503 while it is down.
 */
class ChargeApiTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final String POLICIES = """
            server:
              management-port: 0
            policies:
              per-client:
                limits:
                  - capacity: 10
                    refill: 5/s
              owing:
                max-debt: 5s        # 25 tokens below empty at most
                limits:
                  - capacity: 10
                    refill: 5/s
            """;

    private static final ManualTimeSource time = new ManualTimeSource();
    private static RunningServer server;

    @BeforeAll
    static void start() throws Exception {
        server = RunningServer.start(POLICIES, time);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void aChargeBeyondTheBucketAnswersItsStateAndTheNextChecksWaitOutTheDebt() {
        HttpResponse<String> charged =
                server.post("/v1/charge", "{\"policy\": \"owing\", \"key\": \"dora\", \"cost\": 25}");
        HttpResponse<String> refused = server.post("/v1/check", "{\"policy\": \"owing\", \"key\": \"dora\"}");
        time.advance(Duration.ofMillis(3_199));
        HttpResponse<String> stillRefused = server.post("/v1/check", "{\"policy\": \"owing\", \"key\": \"dora\"}");
        time.advance(Duration.ofMillis(1));
        HttpResponse<String> allowed = server.post("/v1/check", "{\"policy\": \"owing\", \"key\": \"dora\"}");

        assertThat(charged.statusCode()).isEqualTo(200);
        assertThat(charged.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(charged.body())
                .isEqualTo("{\"policy\":\"owing\",\"key\":\"dora\",\"charged\":25,\"remaining\":0,"
                        + "\"reset_after_ms\":5000,\"max_debt_reached\":false}");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"retry_after_ms\":3200");
        assertThat(stillRefused.statusCode()).isEqualTo(429);
        assertThat(allowed.statusCode()).isEqualTo(200);
        assertThat(server.management("GET", "/metrics").body())
                .contains("tollgate_api_charges_total{policy=\"owing\",result=\"charged\"}")
                .containsPattern("tollgate_api_charged_tokens_total\\{policy=\"owing\"} [0-9.]+");
    }

    @Test
    void noChargeTakesABucketDeeperThanItsPolicysMaxDebtHoweverLargeOrOften() {
        String huge = "{\"policy\": \"per-client\", \"key\": \"mallory\", \"cost\": 100000}";
        HttpResponse<String> charged = server.post("/v1/charge", huge);
        for (int i = 0; i < 50; i++) {
            server.post("/v1/charge", huge);
        }
        HttpResponse<String> refused = server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"mallory\"}");
        time.advance(Duration.ofMillis(2_200));
        HttpResponse<String> allowed = server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"mallory\"}");

        // per-client's default maximum debt: the time it takes to fill, 2 s, 10 tokens below empty
        assertThat(charged.body())
                .isEqualTo("{\"policy\":\"per-client\",\"key\":\"mallory\",\"charged\":100000,\"remaining\":0,"
                        + "\"reset_after_ms\":4000,\"max_debt_reached\":true}");
        assertThat(refused.body()).contains("\"retry_after_ms\":2200");
        assertThat(allowed.statusCode())
                .as("out for the maximum debt and one token, not a day")
                .isEqualTo(200);
    }

    @Test
    void aChargeWithoutItsCostOrWithABadOneIs400AndChargesNothing() {
        assertProblem(
                server.post("/v1/charge", "{\"policy\": \"per-client\", \"key\": \"erin\"}"),
                400,
                "cost is required: the tokens to take, at least 1");
        assertProblem(
                server.post("/v1/charge", "{\"policy\": \"per-client\", \"key\": \"erin\", \"cost\": 0}"),
                400,
                "cost must be at least 1, was 0");
        assertProblem(
                server.post(
                        "/v1/charge", "{\"policy\": \"per-client\", \"key\": \"erin\", \"cost\": 9223372036854775807}"),
                400,
                "cost 9223372036854775807 exceeds the largest charge policy 'per-client' can count exactly (");
        assertProblem(
                server.post("/v1/charge", "{\"checks\": [{\"policy\": \"per-client\", \"key\": \"erin\"}]}"),
                400,
                "a charge is one object of policy, key and cost; checks are for /v1/check");
        assertProblem(
                server.post("/v1/charge", "{\"policy\": \"per-user\", \"key\": \"erin\", \"cost\": 1}"),
                404,
                "unknown policy 'per-user'; defined: owing, per-client");
        assertThat(server.get("/v1/charge").statusCode()).isEqualTo(405);
        assertThat(server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"erin\", \"cost\": 10}")
                        .statusCode())
                .as("nothing was charged")
                .isEqualTo(200);
    }

    @Test
    void onRedisAChargeIsSeenByEveryServerAndADownRedisAnswers503() throws Exception {
        String config = POLICIES + """
                redis:
                  uri: %s
                  timeout: 200ms
                """.formatted(redis.server().uri());
        try (RunningServer first = RunningServer.start(config);
                RunningServer second = RunningServer.start(config)) {
            HttpResponse<String> charged =
                    first.post("/v1/charge", "{\"policy\": \"per-client\", \"key\": \"frank\", \"cost\": 30}");
            HttpResponse<String> refused = second.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"frank\"}");
            redis.server().kill();
            HttpResponse<String> down;
            try {
                down = first.post("/v1/charge", "{\"policy\": \"per-client\", \"key\": \"frank\", \"cost\": 1}");
            } finally {
                redis.server().restart();
            }

            assertThat(charged.statusCode()).isEqualTo(200);
            assertThat(charged.body()).contains("\"charged\":30", "\"remaining\":0");
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.body()).contains("\"degraded\":false");
            assertThat(first.management("GET", "/metrics").body())
                    .contains("tollgate_api_charges_total{policy=\"per-client\",result=\"failed\"} 1.0");
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(down.body()).contains("The charge could not be taken; nothing was charged");
        }
    }
}
