package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.LimiterArguments;
import io.tollgate.fixtures.ManualTimeSource;
import java.io.ByteArrayInputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code POST /v1/check} on a real server, over loopback, on the in-memory store with a manual clock. */
class DecisionApiTest {

    private static final String CONFIG = """
            server:
              management-port: 0
            policies:
              per-client:
                limits:
                  - capacity: 10
                    refill: 5/s
              layered:
                limits:
                  - capacity: 3
                    refill: 1/s
                  - capacity: 100
                    refill: 100/h
            """;

    private static final ManualTimeSource time = new ManualTimeSource();
    private static RunningServer server;

    @BeforeAll
    static void start() throws Exception {
        server = RunningServer.start(CONFIG, time);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void anAllowedCheckAnswers200WithTheDecisionAndTheRateLimitFields() {
        HttpResponse<String> response = check("{\"policy\": \"per-client\", \"key\": \"alice\", \"cost\": 1}");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"per-client\";q=10;w=2");
        assertThat(response.headers().firstValue("RateLimit")).hasValue("\"per-client\";r=9;t=1");
        assertThat(response.headers().firstValue("Retry-After")).isEmpty();
        assertThat(response.body())
                .isEqualTo("{\"allowed\":true,\"policy\":\"per-client\",\"key\":\"alice\",\"limit\":10,\"remaining\":9,"
                        + "\"retry_after_ms\":0,\"reset_after_ms\":200,\"degraded\":false}");
    }

    @Test
    void aRefusedCheckAnswers429WithRetryAfterAndPassesOnceItIsDue() {
        check("{\"policy\": \"per-client\", \"key\": \"bob\", \"cost\": 10}");

        HttpResponse<String> refused = check("{\"policy\": \"per-client\", \"key\": \"bob\"}");
        time.advance(Duration.ofMillis(199));
        HttpResponse<String> early = check("{\"policy\": \"per-client\", \"key\": \"bob\"}");
        time.advance(Duration.ofMillis(1));
        HttpResponse<String> due = check("{\"policy\": \"per-client\", \"key\": \"bob\"}");

        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"per-client\";r=0;t=2");
        assertThat(refused.body())
                .isEqualTo("{\"allowed\":false,\"policy\":\"per-client\",\"key\":\"bob\",\"limit\":10,\"remaining\":0,"
                        + "\"retry_after_ms\":200,\"reset_after_ms\":2000,\"degraded\":false}");
        assertThat(early.statusCode()).isEqualTo(429);
        assertThat(due.statusCode()).isEqualTo(200);
    }

    @Test
    void aBatchDecidesEveryCheckOnItsOwnInOneRoundTrip() {
        HttpResponse<String> response = check("""
                {"checks": [
                  {"policy": "layered", "key": "carol", "cost": 3},
                  {"policy": "layered", "key": "carol"},
                  {"policy": "per-client", "key": "carol", "cost": 2}
                ]}""");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body())
                .isEqualTo("{\"results\":["
                        + "{\"allowed\":true,\"policy\":\"layered\",\"key\":\"carol\",\"limit\":3,\"remaining\":0,"
                        + "\"retry_after_ms\":0,\"reset_after_ms\":3000,\"degraded\":false},"
                        + "{\"allowed\":false,\"policy\":\"layered\",\"key\":\"carol\",\"limit\":3,\"remaining\":0,"
                        + "\"retry_after_ms\":1000,\"reset_after_ms\":3000,\"degraded\":false},"
                        + "{\"allowed\":true,\"policy\":\"per-client\",\"key\":\"carol\",\"limit\":10,\"remaining\":8,"
                        + "\"retry_after_ms\":0,\"reset_after_ms\":400,\"degraded\":false}]}");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "{\"policy\": | 400 | malformed JSON: ",
                "not json | 400 | malformed JSON: ",
                "[1, 2] | 400 | the body must be a JSON object",
                "{\"key\": \"a\"} | 400 | policy is required",
                "{\"policy\": \"per-client\"} | 400 | key is required",
                "{\"policy\": \"per-client\", \"key\": \"\"} | 400 | key is required",
                "{\"policy\": 7, \"key\": \"a\"} | 400 | policy must be a string, was a number",
                "{\"policy\": \"per-client\", \"key\": \"a\", \"cost\": \"1\"} | 400 | cost must be a whole number, was a string",
                "{\"policy\": \"per-client\", \"key\": \"a\", \"cost\": 1.5} | 400 | cost must be a whole number, was a number",
                "{\"policy\": \"per-client\", \"key\": \"a\", \"cost\": 0} | 400 | cost must be at least 1, was 0",
                "{\"policy\": \"per-client\", \"key\": \"a\", \"cost\": 11} | 400 | cost 11 exceeds the smallest capacity (10)",
                "{\"policy\": \"per-client\", \"key\": \"a\", \"cost\": 99999999999999999999} | 400 | cost 99999999999999999999 is too large",
                "{\"policy\": \"per-client\", \"key\": \"a\", \"cots\": 1} | 400 | unknown field cots",
                "{\"policy\": \"per-client\", \"key\": \"a\", \"key\": \"b\"} | 400 | malformed JSON: Duplicate field 'key'",
                "{\"policy\": \"per-client\", \"key\": \"a\"} {} | 400 | the body must hold one JSON object and nothing after it",
                "{\"policy\": \"nope\", \"key\": \"a\"} | 404 | unknown policy 'nope'; defined: layered, per-client",
                "{\"checks\": []} | 400 | checks must hold 1 to 100 checks, has 0",
                "{\"checks\": [{\"policy\": \"per-client\", \"key\": \"a\"}], \"key\": \"a\"} | 400 | give either checks or policy",
                "{\"checks\": [{\"policy\": \"per-client\"}]} | 400 | checks[0].key is required",
                "{\"checks\": [7]} | 400 | checks[0] must be an object, was a number",
                "{\"checks\": [{\"policy\": \"nope\", \"key\": \"a\"}]} | 404 | unknown policy 'nope'",
            })
    void aBadCheckIsAProblemNamingWhatIsWrong(String body, int status, String detail) {
        HttpResponse<String> response = check(body);

        assertThat(response.statusCode()).isEqualTo(status);
        assertProblem(response, status, detail);
    }

    @Test
    void aBodyThatIsNoTextIs400() {
        // Four bytes that a JSON parser takes for UTF-32, then a "character" past U+10FFFF
        byte[] body = {0, 0, 0, '{', 'c', 'd', 0, 0};

        HttpResponse<String> response = server.send(server.request("/v1/check")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build());

        assertProblem(response, 400, "the body must be JSON text in UTF-8");
    }

    @Test
    void aBodyOfOverlongUtf8OrInUtf16Is400() {
        byte[] overlong =
                "{\"policy\": \"per-client\", \"key\": \"a\u00c0\u00afb\"}".getBytes(StandardCharsets.ISO_8859_1);
        byte[] utf16 = "{\"policy\": \"per-client\", \"key\": \"alice\"}".getBytes(StandardCharsets.UTF_16LE);

        for (byte[] body : List.of(overlong, utf16)) {
            HttpResponse<String> response = server.send(server.request("/v1/check")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                    .build());

            assertProblem(response, 400, "the body must be JSON text in UTF-8");
        }
        assertThat(server.decision("/v1/check", "{\"policy\": \"per-client\", \"key\": \"caf\u00e9\"}")
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void aKeyLongerThanTheBoundIs400() {
        HttpResponse<String> response = check(
                "{\"policy\": \"per-client\", \"key\": \"" + "k".repeat(CheckRequest.MAX_KEY_FIELD_LENGTH + 1) + "\"}");

        assertProblem(response, 400, "key is 1025 characters long; the most is 1024");
    }

    @Test
    void aKeyPastTheKeyRuleIsDecidedUnderItsDigestAsEverywhere() {
        String longKey = "carol-".repeat(60); // 360 characters: accepted, and bounded by the one key rule
        String sibling = longKey + "x"; // the same first 256 characters, and more

        HttpResponse<String> drained =
                check("{\"policy\": \"per-client\", \"key\": \"" + longKey + "\", \"cost\": 10}");
        HttpResponse<String> again = check("{\"policy\": \"per-client\", \"key\": \"" + longKey + "\"}");
        HttpResponse<String> other = check("{\"policy\": \"per-client\", \"key\": \"" + sibling + "\"}");
        HttpResponse<String> inspected = server.management(
                "GET", "/admin/buckets/per-client/" + LimiterArguments.boundedKey(CheckApi.KEY_PREFIX + longKey));

        assertThat(drained.statusCode()).isEqualTo(200);
        assertThat(again.statusCode()).as("the same bucket").isEqualTo(429);
        assertThat(other.statusCode())
                .as("a bucket of its own: the digest is of the whole key")
                .isEqualTo(200);
        assertThat(inspected.body()).as("kept under the digest").contains("\"stored\":true", "\"remaining\":0");
    }

    @Test
    void tooManyChecksAre400() {
        String one = "{\"policy\": \"per-client\", \"key\": \"a\"}";
        HttpResponse<String> response =
                check("{\"checks\": [" + (one + ",").repeat(CheckRequest.MAX_CHECKS) + one + "]}");

        assertProblem(response, 400, "checks must hold 1 to 100 checks, has more");
    }

    @Test
    void aBodyOverTheBoundIs413WithOrWithoutALength() {
        byte[] huge =
                ("{\"policy\": \"per-client\", \"key\": \"" + "k".repeat(CheckApi.MAX_BODY_BYTES) + "\"}").getBytes();

        HttpResponse<String> withLength = server.send(server.request("/v1/check")
                .POST(HttpRequest.BodyPublishers.ofByteArray(huge))
                .build());
        HttpResponse<String> chunked = server.send(server.request("/v1/check")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(huge)))
                .build());

        assertProblem(withLength, 413, "The body is larger than 65536 bytes");
        assertProblem(chunked, 413, "The body is larger than 65536 bytes");
    }

    @Test
    void aClientThatWritesAFiveMegabyteBodyBeforeReadingReadsThe413() throws Exception {
        byte[] body = new byte[5 * 1024 * 1024];
        java.util.Arrays.fill(body, (byte) 'x');
        byte[] chunked = ("500000\r\n" + "x".repeat(5 * 1024 * 1024) + "\r\n0\r\n\r\n").getBytes();

        RawHttp.Answer withLength = RawHttp.send(
                server.server().port(),
                "POST /v1/check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length,
                body);
        RawHttp.Answer inChunks = RawHttp.send(
                server.server().port(),
                "POST /v1/check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked",
                chunked);

        assertThat(withLength.status()).isEqualTo(413);
        assertThat(withLength.header("Connection")).containsExactly("close");
        assertThat(withLength.body()).contains("The body is larger than 65536 bytes");
        assertThat(inChunks.status()).isEqualTo(413);
        assertThat(inChunks.body()).contains("The body is larger than 65536 bytes");
    }

    @Test
    void anotherMethodThanPostIs405() {
        HttpResponse<String> get = server.get("/v1/check");
        HttpResponse<String> put = server.send(server.request("/v1/check")
                .PUT(HttpRequest.BodyPublishers.ofString("{}"))
                .build());

        assertProblem(get, 405, "Use POST for /v1/check, not GET.");
        assertThat(get.headers().firstValue("Allow")).hasValue("POST");
        assertProblem(put, 405, "Use POST for /v1/check, not PUT.");
    }

    @Test
    void withoutAnUpstreamOtherPathsAre404() {
        assertProblem(server.get("/api/anything"), 404, "No such endpoint: /api/anything.");
    }

    @Test
    void healthAndReadinessAnswerOnTheInMemoryStore() {
        HttpResponse<String> health = server.get("/healthz");
        HttpResponse<String> ready = server.get("/readyz");

        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).isEqualTo("{\"status\":\"up\"}");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).isEqualTo("{\"status\":\"ready\"}");
    }

    @Test
    void metricsCountDecisionsByPolicyAndOutcome() {
        check("{\"policy\": \"layered\", \"key\": \"dave\", \"cost\": 3}");
        check("{\"policy\": \"layered\", \"key\": \"dave\"}");

        HttpResponse<String> metrics = server.management("GET", "/metrics");

        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
        assertThat(metrics.body())
                .contains("tollgate_api_decisions_total{degraded=\"false\",outcome=\"refused\",policy=\"layered\"}")
                .contains("tollgate_server_requests_seconds_bucket{handler=\"check\"")
                .contains("jvm_memory_used_bytes");
    }

    @Test
    void metricsCountTheInMemoryLimitersOwnDecisionsAsOnRedis() {
        check("{\"policy\": \"layered\", \"key\": \"erin\", \"cost\": 3}");
        check("{\"policy\": \"layered\", \"key\": \"erin\"}");

        String metrics = server.management("GET", "/metrics").body();

        assertThat(metrics)
                .containsPattern(
                        "tollgate_decisions_total\\{outcome=\"allowed\",policy=\"layered\",source=\"memory\"} [1-9]")
                .containsPattern(
                        "tollgate_decisions_total\\{outcome=\"refused\",policy=\"layered\",source=\"memory\"} [1-9]")
                .doesNotContain("tollgate_redis");
    }

    static void assertProblem(HttpResponse<String> response, int status, String detail) {
        assertThat(response.statusCode()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(response.body()).startsWith("{\"type\":\"about:blank\",").contains("\"status\":" + status + ",");
        assertThat(response.body()).contains("\"detail\":\"" + detail.replace("\"", "\\\""));
    }

    private static HttpResponse<String> check(String body) {
        return server.post("/v1/check", body);
    }
}
