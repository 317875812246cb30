package io.tollgate.spring.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.gateway.testapp.GatewayTestApplication;
import io.tollgate.testing.RedisExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The gateway on the application's Redis (spring.data.redis.*), failing closed: the buckets live in Redis,
 * and while Redis is down every request is refused within the time budget, with the header fields, until
 * Redis is back.
 */
@SpringBootTest(
        classes = GatewayTestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"tollgate.redis.failure-policy=deny", "tollgate.redis.timeout=200ms"})
@ActiveProfiles("gateway")
@DirtiesContext
class GatewayOnRedisTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final Upstream UPSTREAM = Upstream.startOrFail();

    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry properties) {
        properties.add("upstream.uri", UPSTREAM::uri);
        properties.add("spring.data.redis.host", () -> "127.0.0.1");
        properties.add("spring.data.redis.port", () -> redis.server().port());
    }

    @AfterAll
    static void stopUpstream() {
        UPSTREAM.close();
    }

    @Test
    void theBucketsLiveInRedis() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            statuses.add(get("/orders/7", "erin").statusCode());
        }

        assertThat(statuses).containsExactly(200, 200, 200, 429);
        assertThat(redis.server().command("EXISTS", "tollgate:route.orders:erin"))
                .isEqualTo(1L);
    }

    @Test
    void withRedisDownRequestsAreRefusedWithinTheBudgetUntilItIsBack() throws Exception {
        int before = UPSTREAM.requests();
        redis.server().kill();
        HttpResponse<String> refused;
        try {
            refused = get("/orders/8", "frank");
        } finally {
            redis.server().restart();
        }

        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(refused.headers().firstValue("RateLimit")).isPresent();
        assertThat(UPSTREAM.requests()).isEqualTo(before);
        assertThat(eventually200("/orders/8", "frank")).isEqualTo(200);
    }

    /** Asks until Redis answers again (the client reconnects on its own), for at most 20 s. */
    private int eventually200(String path, String user) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        int status;
        do {
            status = get(path, user).statusCode();
            if (status != 200) {
                Thread.sleep(100);
            }
        } while (status != 200 && System.nanoTime() < deadline);
        return status;
    }

    private HttpResponse<String> get(String path, String user) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .header("X-User", user)
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
