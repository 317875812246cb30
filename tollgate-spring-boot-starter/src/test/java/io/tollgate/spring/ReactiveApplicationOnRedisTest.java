package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.RateLimiter;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.spring.reactiveapp.ReactiveTestApplication;
import io.tollgate.testing.RedisExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The reactive application on the application's own Redis (spring.data.redis.*), failing closed: the web
 * filter and {@code @RateLimit} decide in Redis, and while Redis is down they answer 503 with the
 * unavailable problem within the time budget, until it is back.
 */
@SpringBootTest(
        classes = ReactiveTestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"tollgate.redis.failure-policy=deny", "tollgate.redis.timeout=200ms"})
@ActiveProfiles("reactive")
@DirtiesContext
class ReactiveApplicationOnRedisTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @LocalServerPort
    int port;

    @Autowired
    RateLimiter limiter;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry properties) {
        properties.add("spring.data.redis.host", () -> "127.0.0.1");
        properties.add("spring.data.redis.port", () -> redis.server().port());
    }

    @Test
    void theFilterAndTheAnnotationsDecideInTheApplicationsRedis() throws Exception {
        List<Integer> filtered = new ArrayList<>();
        List<Integer> annotated = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            filtered.add(get("/api/hello", "X-Forwarded-For", "203.0.113.20").statusCode());
            annotated.add(get("/users/dora/orders").statusCode());
        }

        assertThat(limiter).isInstanceOf(RedisRateLimiter.class);
        assertThat(filtered).containsExactly(200, 200, 200, 429);
        assertThat(annotated).containsExactly(200, 200, 429, 429);
        assertThat(redis.server().command("EXISTS", "tollgate:per-ip:ip:203.0.113.20"))
                .isEqualTo(1L);
        assertThat(redis.server().command("EXISTS", "tollgate:per-user:key:dora"))
                .isEqualTo(1L);
    }

    @Test
    void withRedisDownBothAnswer503WithinTheBudgetUntilItIsBack() throws Exception {
        redis.server().kill();
        HttpResponse<String> filtered;
        HttpResponse<String> annotated;
        try {
            filtered = get("/api/hello", "X-Forwarded-For", "203.0.113.21");
            annotated = get("/users/erin/orders");
        } finally {
            redis.server().restart();
        }

        assertThat(filtered.statusCode()).isEqualTo(503);
        assertThat(filtered.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(filtered.body()).contains("\"type\":\"urn:tollgate:limiter-unavailable\"", "\"per-ip\"");
        assertThat(annotated.statusCode()).isEqualTo(503);
        assertThat(annotated.body()).contains("\"type\":\"urn:tollgate:limiter-unavailable\"", "\"per-user\"");
        assertThat(eventually200("/users/erin/orders")).isEqualTo(200);
    }

    /** Asks until Redis answers again (the client reconnects on its own), for at most 20 s. */
    private int eventually200(String path) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        int status;
        do {
            status = get(path).statusCode();
            if (status != 200) {
                Thread.sleep(100);
            }
        } while (status != 200 && System.nanoTime() < deadline);
        return status;
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
