package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.RateLimiter;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.spring.testapp.TestApplication;
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
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The same application on the application's own Redis, configured only through Boot's spring.data.redis.*:
 * the starter shares that connection factory's Lettuce client and keeps every bucket in Redis.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("ratelimited")
@DirtiesContext
class RateLimitedApplicationOnRedisTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    RateLimiter limiter;

    @Autowired
    StringRedisTemplate template;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry properties) {
        properties.add("spring.data.redis.host", () -> "127.0.0.1");
        properties.add("spring.data.redis.port", () -> redis.server().port());
    }

    @Test
    void theRulesAndTheAnnotationsDecideInTheApplicationsRedis() throws Exception {
        List<Integer> filtered = new ArrayList<>();
        List<Integer> annotated = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            filtered.add(get("/api/hello").statusCode());
            annotated.add(get("/users/dora/orders").statusCode());
        }

        assertThat(limiter).isInstanceOf(RedisRateLimiter.class);
        assertThat(filtered).containsExactly(200, 200, 200, 429);
        assertThat(annotated).containsExactly(200, 200, 429, 429);
        assertThat(template.keys("tollgate:*")).contains("tollgate:per-ip:ip:127.0.0.1", "tollgate:per-user:key:dora");
    }

    @Test
    void theApplicationsOwnRedisAccessKeepsWorking() {
        template.opsForValue().set("greeting", "hello");

        assertThat(template.opsForValue().get("greeting")).isEqualTo("hello");
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
