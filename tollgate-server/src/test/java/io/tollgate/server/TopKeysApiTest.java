package io.tollgate.server;

import static io.tollgate.server.DecisionApiTest.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.top.KeyDisplay;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code GET /admin/top}: who the server limits, per policy, on the management port. */
class TopKeysApiTest {

    private static final String CONFIG = """
            server:
              management-port: 0
            top-keys:
              enabled: true
            policies:
              per-client:
                limits:
                  - capacity: 5
                    refill: 1/h
              other:
                limits:
                  - capacity: 5
                    refill: 1/h
            """;

    private RunningServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void listsTheKeysRefusedMostWithTheirCountsAndTheErrorBound() throws Exception {
        server = RunningServer.start(
                CONFIG.replace("  enabled: true\n", "  enabled: true\n  show: whole\n"), new ManualTimeSource());
        check("flooder", 20);
        check("alice", 6);

        HttpResponse<String> top = server.management("GET", "/admin/top?policy=per-client&by=refused&window=1m");

        assertThat(top.statusCode()).isEqualTo(200);
        assertThat(top.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(top.body())
                .isEqualTo("{\"policy\":\"per-client\",\"by\":\"refused\",\"window\":\"1m\",\"total\":16,"
                        + "\"error_bound\":0,\"capacity\":64,\"keys_shown\":\"whole\",\"instances\":1,\"keys\":["
                        + "{\"key\":\"api:flooder\",\"digest\":\"" + KeyDisplay.digest("api:flooder")
                        + "\",\"count\":15,\"error\":0},"
                        + "{\"key\":\"api:alice\",\"digest\":\"" + KeyDisplay.digest("api:alice")
                        + "\",\"count\":1,\"error\":0}]}");
    }

    @Test
    void listsTheKeysChargedMostOverFifteenMinutes() throws Exception {
        server = RunningServer.start(
                CONFIG.replace("  enabled: true\n", "  enabled: true\n  show: whole\n"), new ManualTimeSource());
        check("flooder", 20);
        check("alice", 2);

        HttpResponse<String> top =
                server.management("GET", "/admin/top?policy=per-client&by=charged&window=15m&limit=1");

        assertThat(top.body())
                .contains("\"by\":\"charged\",\"window\":\"15m\",\"total\":7,")
                .contains("{\"key\":\"api:flooder\",")
                .doesNotContain("alice");
    }

    @Test
    void masksTheKeysUnlessToldToShowThemWhole() throws Exception {
        server = RunningServer.start(CONFIG, new ManualTimeSource());
        check("sk_live_0123456789", 7);

        HttpResponse<String> top = server.management("GET", "/admin/top?policy=per-client");

        assertThat(top.body())
                .contains("\"keys_shown\":\"masked\"")
                .contains("\"key\":\"api:sk_l…" + KeyDisplay.digest("api:sk_live_0123456789") + "\"")
                .doesNotContain("0123456789\"");
    }

    @Test
    void answersAsTheServerPageShows() throws Exception {
        server = RunningServer.start(CONFIG, new ManualTimeSource());
        check("flooder", 20);
        check("alice", 6);
        String page = Files.readString(DocumentationExamples.PROJECT.resolve("docs/server.md"));
        String shown = page.lines()
                .filter(line -> line.startsWith("{\"policy\":\"per-client\",\"by\":\"refused\""))
                .findFirst()
                .orElseThrow();

        assertThat(server.management("GET", "/admin/top?policy=per-client&by=refused&window=1m")
                        .body())
                .isEqualTo(shown);
    }

    @Test
    void saysHowToTurnCountingOnWhenItIsOff() throws Exception {
        server = RunningServer.start(
                CONFIG.replace("top-keys:\n  enabled: true\n", "top-keys:\n  enabled: false\n"),
                new ManualTimeSource());
        check("flooder", 20);

        assertProblem(
                server.management("GET", "/admin/top?policy=per-client"),
                409,
                "This server does not count who it limits: set top-keys.enabled to true (it costs each decision an"
                        + " update of a summary; see docs/benchmarks.md).");
    }

    @Test
    void namesAMissingOrBadParameter() throws Exception {
        server = RunningServer.start(CONFIG, new ManualTimeSource());

        assertProblem(
                server.management("GET", "/admin/top"),
                400,
                "The parameter policy is required; policies: other, per-client");
        assertProblem(
                server.management("GET", "/admin/top?policy=per-client&by=used"),
                400,
                "The parameter by must be refused or charged, was 'used'.");
        assertProblem(
                server.management("GET", "/admin/top?policy=per-client&window=1h"),
                400,
                "The parameter window must be 1m or 15m, was '1h'.");
        assertProblem(
                server.management("GET", "/admin/top?policy=per-client&limit=0"),
                400,
                "The parameter limit must be 1 to 100, was '0'.");
        assertThat(server.management("GET", "/admin/top?policy=nope").statusCode())
                .isEqualTo(404);
        assertThat(server.management("POST", "/admin/top?policy=per-client").statusCode())
                .isEqualTo(405);
    }

    @Test
    void inspectsAndResetsAListedKeyByItsDigestWithoutShowingItWhole() throws Exception {
        server = RunningServer.start(CONFIG, new ManualTimeSource());
        check("k-secret-123", 8);
        String digest = KeyDisplay.digest("api:k-secret-123"); // the decision API keeps its keys under api:

        HttpResponse<String> bucket = server.management("GET", "/admin/buckets/per-client?digest=" + digest);
        HttpResponse<String> reset = server.management("DELETE", "/admin/buckets/per-client?digest=" + digest);
        HttpResponse<String> after = server.management("GET", "/admin/buckets/per-client/api:k-secret-123");

        assertThat(bucket.statusCode()).isEqualTo(200);
        assertThat(bucket.body())
                .startsWith("{\"policy\":\"per-client\",\"key\":\"" + KeyDisplay.MASKED.show("api:k-secret-123")
                        + "\",\"stored\":true,\"remaining\":0,")
                .contains("\"digest\":\"" + digest + "\"")
                .doesNotContain("k-secret-123");
        assertThat(reset.statusCode()).isEqualTo(204);
        assertThat(after.body()).contains("\"remaining\":5");
    }

    @Test
    void aDigestOfNoListedKeyIsNotFoundAndOneBesideAKeyIsABadRequest() throws Exception {
        server = RunningServer.start(CONFIG, new ManualTimeSource());
        check("alice", 6);

        assertProblem(
                server.management("DELETE", "/admin/buckets/per-client?digest=0123456789abcdef"),
                404,
                "No key of policy per-client that /admin/top lists has the digest '0123456789abcdef' (the summaries"
                        + " keep the heaviest keys of the last 15 minutes).");
        assertProblem(
                server.management("GET", "/admin/buckets/per-client/alice?digest=" + KeyDisplay.digest("api:alice")),
                400,
                "Name the key by its path, /admin/buckets/{policy}/{key}, or by the digest /admin/top lists,"
                        + " /admin/buckets/{policy}?digest=D, not both.");
        assertThat(server.management("GET", "/admin/buckets/nope?digest=" + KeyDisplay.digest("alice"))
                        .statusCode())
                .isEqualTo(404);
    }

    @Test
    void theStoreInMemoryAlwaysAnswersAndHasNoNodes() throws Exception {
        server = RunningServer.start(CONFIG);

        HttpResponse<String> store = server.management("GET", "/admin/store");
        HttpResponse<String> rates = server.management("GET", "/admin/rates");

        assertThat(store.body())
                .isEqualTo("{\"store\":\"memory\",\"answers\":true,\"problem\":null,\"nodes\":[],\"latency\":null}");
        assertThat(rates.statusCode()).isEqualTo(200);
        assertThat(rates.body()).startsWith("{\"interval_seconds\":2,\"end\":\"");
        assertThat(server.management("POST", "/admin/store").statusCode()).isEqualTo(405);
    }

    private void check(String key, int times) {
        for (int i = 0; i < times; i++) {
            server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"" + key + "\"}");
        }
    }
}
