package io.tollgate.spring.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.spring.gateway.testapp.GatewayTestApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A Spring Cloud Gateway application with routes to a local upstream, limited by {@code
 * #{@tollgateRateLimiter}} in memory: Spring Cloud Gateway's own arguments, a Tollgate policy of two limits on
 * one route, the header fields of both, and each key resolver's key a bucket of its own.
 */
@SpringBootTest(
        classes = {GatewayTestApplication.class, GatewayInMemoryTest.OnTheTestsClock.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "tollgate.redis.use-application-redis=false")
@ActiveProfiles("gateway")
@DirtiesContext
class GatewayInMemoryTest {

    private static final Upstream UPSTREAM = Upstream.startOrFail();

    /** The limiter's clock: a refill is the test moving it, not a sleep that a busy machine may outlast. */
    private static final ManualTimeSource CLOCK = new ManualTimeSource(1_700_000_000_000_000L);

    /** The application's limiter, in memory as the starter makes it, on the test's clock. */
    @TestConfiguration(proxyBeanMethods = false)
    static class OnTheTestsClock {
        @Bean
        RateLimiter limiterOnTheTestsClock() {
            return InMemoryRateLimiter.builder().timeSource(CLOCK).build();
        }
    }

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void upstream(DynamicPropertyRegistry properties) {
        properties.add("upstream.uri", UPSTREAM::uri);
    }

    @AfterAll
    static void stopUpstream() {
        UPSTREAM.close();
    }

    @Test
    void theGatewaysOwnArgumentsLimitEachKeyAndTheAnswersCarryBothKindsOfFields() throws Exception {
        List<HttpResponse<String>> alice = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            alice.add(get("/orders/1", "alice"));
        }
        HttpResponse<String> bob = get("/orders/1", "bob");

        assertThat(alice).extracting(HttpResponse::statusCode).containsExactly(200, 200, 200, 429);
        HttpResponse<String> first = alice.get(0);
        assertThat(first.body()).isEqualTo("upstream saw /orders/1");
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"route.orders\";q=3;w=3");
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"route.orders\";r=2;t=1");
        assertThat(first.headers().firstValue("X-RateLimit-Remaining")).hasValue("2");
        assertThat(first.headers().firstValue("X-RateLimit-Replenish-Rate")).hasValue("1");
        assertThat(first.headers().firstValue("X-RateLimit-Burst-Capacity")).hasValue("3");
        assertThat(first.headers().firstValue("X-RateLimit-Requested-Tokens")).hasValue("1");
        HttpResponse<String> refused = alice.get(3);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(refused.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
        assertThat(refused.body()).isEmpty();
        assertThat(bob.statusCode()).isEqualTo(200);
    }

    @Test
    void aTollgatePolicyPutsSeveralLimitsOnOneRoute() throws Exception {
        get("/reports/warm-up", "someone-else"); // the route's first request builds it: not in carol's timing
        int first = get("/reports/q1", "carol").statusCode();
        int second = get("/reports/q1", "carol").statusCode();
        HttpResponse<String> burst = get("/reports/q1", "carol");
        CLOCK.advance(Duration.ofSeconds(1)); // the burst limit refills one a second
        HttpResponse<String> third = get("/reports/q1", "carol");
        CLOCK.advance(Duration.ofSeconds(1));
        HttpResponse<String> hourly = get("/reports/q1", "carol");

        assertThat(List.of(first, second, third.statusCode())).containsOnly(200);
        assertThat(third.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"reports.0\";q=2;w=2, \"reports.1\";q=3;w=3600");
        assertThat(burst.statusCode()).isEqualTo(429);
        assertThat(burst.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(hourly.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(hourly.headers().firstValue("Retry-After").orElseThrow()))
                .isBetween(1_000L, 1_200L);
        assertThat(hourly.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
        assertThat(hourly.headers().firstValue("X-RateLimit-Replenish-Rate")).isEmpty();
    }

    @Test
    void aBurstCapacityOfZeroRefusesEveryRequestAsTheGatewaysLimiterDoes() throws Exception {
        HttpResponse<String> refused = get("/closed/x", "dave");

        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("X-RateLimit-Burst-Capacity")).hasValue("0");
    }

    private HttpResponse<String> get(String path, String user) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .header("X-User", user)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
