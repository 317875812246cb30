package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.RateLimiter;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example application as docs/spring-boot.md walks through it, on a Redis of the test's own. The per-key
 * limit refills at 20 an hour here rather than 10 a second, so that no token comes back while a test runs.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { // a list is replaced whole, so both settings of the limit
            "tollgate.policies.per-key.limits[0].capacity=20",
            "tollgate.policies.per-key.limits[0].refill=20/h"
        })
class OrdersApplicationTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    RateLimiter limiter;

    @Autowired
    StringRedisTemplate redisTemplate;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry properties) {
        properties.add("spring.data.redis.port", () -> redis.server().port());
    }

    @Test
    void theBucketsLiveInTheApplicationsRedis() {
        assertThat(limiter).isInstanceOf(RedisRateLimiter.class);
    }

    @Test
    void aRequestWithoutAnApiKeyIsRefused401() throws Exception {
        HttpResponse<String> response = send("GET", "/api/orders");

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(response.body()).contains("This request must carry header:X-API-Key.");
    }

    @Test
    void eachApiKeyHasItsBurstOfTwenty() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 21; i++) {
            statuses.add(send("GET", "/api/orders", "X-API-Key", "burst-key").statusCode());
        }

        assertThat(statuses.subList(0, 20)).containsOnly(200);
        assertThat(statuses.get(20)).isEqualTo(429);
        assertThat(redisTemplate.hasKey("tollgate:per-key:header:x-api-key:burst-key"))
                .isTrue();
    }

    @Test
    void eachUserHasFiveAMinuteByTheAnnotation() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            statuses.add(send("GET", "/api/users/u-7/orders", "X-API-Key", "user-key")
                    .statusCode());
        }
        HttpResponse<String> other = send("GET", "/api/users/u-8/orders", "X-API-Key", "user-key");

        assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429);
        assertThat(other.statusCode()).isEqualTo(200);
        assertThat(other.headers().allValues("RateLimit"))
                .containsExactly("\"per-key\";r=13;t=1260", "\"per-user\";r=4;t=12");
    }

    @Test
    void exportsAreLimitedInCodeAndAnswered429() throws Exception {
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            responses.add(send("POST", "/api/tenants/acme/exports", "X-API-Key", "export-key"));
        }

        assertThat(responses).extracting(HttpResponse::statusCode).containsExactly(200, 200, 429);
        assertThat(responses.get(2).headers().firstValue("Retry-After")).hasValue("1800");
        assertThat(responses.get(2).body()).contains("\"policies\":[\"exports\"]");
    }

    private HttpResponse<String> send(String method, String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (headers.length > 0) {
            request.headers(headers);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
