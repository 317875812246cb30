package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.reactiveapp.ReactiveTestApplication;
import io.tollgate.spring.testapp.TestApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * {@code tollgate.overload.*} (application-overload.yml) in a servlet application and in a reactive one: a limit of
 * two requests in flight, of
 * which the requests charged the sheddable policy {@code per-ip} (the rule on {@code /api/**}) may use one. With one
 * request held by the application, a sheddable one waits its most and is refused with the 503 of overload, taking no
 * token; once the held one ends, the next gets in.
 */
class OverloadApplicationTest {

    private final HttpClient client = HttpClient.newHttpClient();

    void sheddableIsRefusedWhileDefaultGetsIn(int port, Semaphore held, Semaphore letGo) throws Exception {
        CompletableFuture<HttpResponse<String>> holding = client.sendAsync(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/held"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(held.tryAcquire(10, TimeUnit.SECONDS))
                .as("the application holds a request")
                .isTrue();

        HttpResponse<String> sheddable = get(port, "/api/hello"); // waits its most, 1 s, for room
        letGo.release();
        HttpResponse<String> afterwards = get(port, "/api/hello"); // waits, if need be, for the held one to end

        assertThat(sheddable.statusCode()).isEqualTo(503);
        assertThat(sheddable.headers().firstValue("Retry-After")).hasValue("2");
        assertThat(sheddable.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(sheddable.body())
                .startsWith("{\"type\":\"urn:tollgate:overloaded\",")
                .contains("(this one is sheddable)");
        assertThat(holding.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        assertThat(afterwards.statusCode()).isEqualTo(200);
        assertThat(afterwards.headers().firstValue("RateLimit"))
                .as("the refused request took no token")
                .hasValue("\"per-ip\";r=2;t=3600");
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Nested
    @SpringBootTest(
            classes = TestApplication.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = "tollgate.redis.use-application-redis=false")
    @ActiveProfiles({"ratelimited", "overload"})
    @DirtiesContext
    class InAServletApplication {

        @LocalServerPort
        int port;

        @Test
        void theSheddableRuleIsRefusedFirst() throws Exception {
            sheddableIsRefusedWhileDefaultGetsIn(port, TestApplication.HELD, TestApplication.LET_GO);
        }
    }

    @Nested
    @SpringBootTest(
            classes = ReactiveTestApplication.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = "tollgate.redis.use-application-redis=false")
    @ActiveProfiles({"reactive", "overload"})
    @DirtiesContext
    class InAReactiveApplication {

        @LocalServerPort
        int port;

        @Test
        void theSheddableRuleIsRefusedFirst() throws Exception {
            sheddableIsRefusedWhileDefaultGetsIn(port, ReactiveTestApplication.HELD, ReactiveTestApplication.LET_GO);
        }
    }
}
