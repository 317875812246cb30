package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.testapp.TestApplication;
import io.tollgate.top.KeyDisplay;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/** The Actuator endpoint {@code tollgate} and the health component, over HTTP, in memory. */
@SpringBootTest(
        classes = TestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "tollgate.redis.use-application-redis=false",
            "tollgate.top-keys.enabled=true",
            "management.endpoints.web.exposure.include=health,tollgate",
            "management.endpoint.health.show-details=always"
        })
@ActiveProfiles("ratelimited")
@DirtiesContext
class TollgateActuatorTest {

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Test
    void theEndpointShowsThePoliciesAndRules() throws Exception {
        HttpResponse<String> policies = send("GET", "/actuator/tollgate");

        assertThat(policies.statusCode()).isEqualTo(200);
        assertThat(policies.body())
                .contains("\"limiter\":\"InMemoryRateLimiter[keys=")
                .contains("\"per-ip\":{\"limits\":[{\"capacity\":3,\"refill\":\"1/h\",\"initial-tokens\":3}]}")
                .contains("\"rules\":[{\"path\":\"/api/**\",\"key\":\"ip\",\"policy\":\"per-ip\"");
    }

    @Test
    void aBucketIsInspectedAndResetThroughTheEndpoint() throws Exception {
        send("GET", "/api/hello");
        send("GET", "/api/hello");

        HttpResponse<String> spent = send("GET", "/actuator/tollgate/per-ip/ip:127.0.0.1");
        HttpResponse<String> reset = send("DELETE", "/actuator/tollgate/per-ip/ip:127.0.0.1");
        HttpResponse<String> unknown = send("GET", "/actuator/tollgate/per-ipp/ip:127.0.0.1");

        assertThat(spent.statusCode()).isEqualTo(200);
        assertThat(spent.body())
                .contains("\"policy\":\"per-ip\"", "\"key\":\"ip:127.0.0.1\"", "\"stored\":true", "\"remaining\":1");
        assertThat(reset.statusCode()).isEqualTo(200);
        assertThat(reset.body())
                .contains(
                        "\"stored\":false", "\"remaining\":3", "\"reset_after_ms\":0", "\"unconfirmed_instances\":[]");
        assertThat(unknown.statusCode()).isEqualTo(404);
        for (int i = 0; i < 3; i++) {
            assertThat(send("GET", "/api/hello").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void theEndpointListsTheKeysRefusedMostWithTheirKeysMasked() throws Exception {
        for (int i = 0; i < 6; i++) {
            send("GET", "/api/hello");
        }

        HttpResponse<String> top = send("GET", "/actuator/tollgate/top?policy=per-ip&by=refused&window=15m");
        send("DELETE", "/actuator/tollgate/per-ip/ip:127.0.0.1"); // the other tests find the bucket full

        assertThat(top.statusCode()).isEqualTo(200);
        assertThat(top.body())
                .contains("\"policy\":\"per-ip\",\"by\":\"refused\",\"window\":\"15m\"")
                .contains("\"keys_shown\":\"masked\"")
                .contains("\"key\":\"ip:127.…" + KeyDisplay.digest("ip:127.0.0.1") + "\"")
                .doesNotContain("127.0.0.1");
    }

    @Test
    void theKeysRefusedMostNeedAPolicyAndKnownParameters() throws Exception {
        assertThat(send("GET", "/actuator/tollgate/top").statusCode()).isEqualTo(400);
        assertThat(send("GET", "/actuator/tollgate/top?policy=per-ip&by=used").statusCode())
                .isEqualTo(400);
        assertThat(send("GET", "/actuator/tollgate/top?policy=per-ip&window=1h").statusCode())
                .isEqualTo(400);
        assertThat(send("GET", "/actuator/tollgate/top?policy=nope").statusCode())
                .isEqualTo(404);
        assertThat(send("GET", "/actuator/tollgate/bottom?policy=per-ip").statusCode())
                .isEqualTo(404);
    }

    @Test
    void theHealthHasATollgateComponent() throws Exception {
        HttpResponse<String> health = send("GET", "/actuator/health");

        assertThat(health.body()).contains("\"tollgate\":{\"details\":{\"store\":\"memory\"},\"status\":\"UP\"}");
    }

    private HttpResponse<String> send(String method, String path) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .method(method, HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
