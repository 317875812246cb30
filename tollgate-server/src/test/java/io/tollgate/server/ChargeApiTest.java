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
            policies:
              per-client:
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
                server.post("/v1/charge", "{\"policy\": \"per-client\", \"key\": \"dora\", \"cost\": 25}");
        HttpResponse<String> refused = server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"dora\"}");
        time.advance(Duration.ofMillis(3_199));
        HttpResponse<String> stillRefused = server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"dora\"}");
        time.advance(Duration.ofMillis(1));
        HttpResponse<String> allowed = server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"dora\"}");

        assertThat(charged.statusCode()).isEqualTo(200);
        assertThat(charged.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(charged.body())
                .isEqualTo("{\"policy\":\"per-client\",\"key\":\"dora\",\"charged\":25,\"remaining\":0,"
                        + "\"reset_after_ms\":5000}");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"retry_after_ms\":3200");
        assertThat(stillRefused.statusCode()).isEqualTo(429);
        assertThat(allowed.statusCode()).isEqualTo(200);
        assertThat(server.get("/metrics").body())
                .contains("tollgate_api_charges_total{policy=\"per-client\",result=\"charged\"}")
                .containsPattern("tollgate_api_charged_tokens_total\\{policy=\"per-client\"} [0-9.]+");
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
                "unknown policy 'per-user'; defined: per-client");
        assertThat(server.get("/v1/charge").statusCode()).isEqualTo(405);
        assertThat(server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"erin\", \"cost\": 10}")
                        .statusCode())
                .as("nothing was charged")
                .isEqualTo(200);
    }

    @Test
    void onRedisAChargeIsSeenByEveryServerAndADownRedisAnswers503() throws Exception {
        String config = """
                redis:
                  uri: %s
                  timeout: 200ms
                """.formatted(redis.server().uri()) + POLICIES;
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
            assertThat(first.get("/metrics").body())
                    .contains("tollgate_api_charges_total{policy=\"per-client\",result=\"failed\"} 1.0");
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(down.body()).contains("The charge could not be taken; nothing was charged");
        }
    }
}
