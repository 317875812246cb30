package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.testapp.TestApplication;
import io.tollgate.testing.FreePorts;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application on a Redis that is not there, failing closed: the filter and {@code @RateLimit} refuse
 * with 503 and a problem saying the limiter is unavailable, not with a 429 that blames the client.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("ratelimited")
@DirtiesContext
class FailingClosedApplicationTest {

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void redisThatIsNotThere(DynamicPropertyRegistry properties) throws IOException {
        int closed = FreePorts.nobodyListens();
        properties.add("tollgate.redis.uri", () -> "redis://127.0.0.1:" + closed);
        properties.add("tollgate.redis.failure-policy", () -> "deny");
    }

    @Test
    void theFilterAnswers503WithTheUnavailableProblem() throws Exception {
        HttpResponse<String> refused = get("/api/hello");

        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(refused.body())
                .contains("\"type\":\"urn:tollgate:limiter-unavailable\"", "\"status\":503", "\"per-ip\"");
    }

    @Test
    void theAnnotationAnswers503WithTheUnavailableProblem() throws Exception {
        HttpResponse<String> refused = get("/users/bob/orders");

        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(refused.body()).contains("\"type\":\"urn:tollgate:limiter-unavailable\"", "\"per-user\"");
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
