package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.RateLimiter;
import io.tollgate.spring.testapp.TestApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * A Boot application on a random port, its limits from application-ratelimited.yml, in memory: told not to
 * share the application's Redis, which spring-boot-starter-data-redis on the test class path would give it.
 */
@SpringBootTest(
        classes = TestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "tollgate.redis.use-application-redis=false")
@ActiveProfiles("ratelimited")
@DirtiesContext
class RateLimitedApplicationTest {

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    RateLimiter limiter;

    @Test
    void withoutRedisTheBucketsLiveInMemoryObservedByListenersNotWrapped() {
        assertThat(limiter).isInstanceOf(InMemoryRateLimiter.class);
    }

    @Test
    void theYamlRuleLimitsTheFilteredPaths() throws Exception {
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            responses.add(get("/api/hello"));
        }

        assertThat(responses).extracting(HttpResponse::statusCode).containsExactly(200, 200, 200, 429);
        assertThat(responses.get(0).headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=2;t=3600");
        HttpResponse<String> refused = responses.get(3);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("3600");
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(refused.body()).contains("\"status\":429", "\"policies\":[\"per-ip\"]");
    }

    @Test
    void theAnnotationLimitsEachUserByTheKeyItNames() throws Exception {
        List<Integer> alice = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            alice.add(get("/users/alice/orders").statusCode());
        }
        HttpResponse<String> bob = get("/users/bob/orders");
        HttpResponse<String> aliceAgain = get("/users/alice/orders");

        assertThat(alice).containsExactly(200, 200, 429);
        assertThat(bob.statusCode()).isEqualTo(200);
        assertThat(bob.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=1;t=3600");
        assertThat(bob.body()).isEqualTo("{\"user\":\"bob\"}");
        assertThat(aliceAgain.statusCode()).isEqualTo(429);
        assertThat(aliceAgain.headers().firstValue("Retry-After")).hasValue("3600");
        assertThat(aliceAgain.headers().firstValue("Cache-Control")).hasValue("no-store");
        assertThat(aliceAgain.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit exceeded for per-user; retry in 3600 s.\","
                        + "\"policies\":[\"per-user\"],\"retry_after\":3600}");
    }

    @Test
    void repeatedAnnotationsAreCheckedInOrderAndCanReadTheRequest() throws Exception {
        HttpResponse<String> first = get("/reports", "X-Tenant", "t-1");
        get("/reports", "X-Tenant", "t-1");
        HttpResponse<String> third = get("/reports", "X-Tenant", "t-1");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().allValues("RateLimit"))
                .containsExactly("\"per-user\";r=1;t=3600, \"global\";r=999;t=4");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().allValues("RateLimit")).containsExactly("\"per-user\";r=0;t=7200");
    }

    @Test
    void theAnnotationKeysByClientIpByDefaultAndChargesItsCost() throws Exception {
        int first = get("/search").statusCode();
        int second = get("/search").statusCode();

        assertThat(first).isEqualTo(200);
        assertThat(second).isEqualTo(429);
    }

    @Test
    void onSpringMvcAMethodReturningAMonoIsCheckedWithTheServletRequest() throws Exception {
        HttpResponse<String> first = get("/stream");
        HttpResponse<String> second = get("/stream");
        HttpResponse<String> third = get("/stream");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"per-stream\";r=1;t=3600");
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(third.statusCode()).isEqualTo(429);
    }

    @Test
    void aRateLimitExceededExceptionFromAServiceIsAnswered429() throws Exception {
        HttpResponse<String> first = get("/exports/acme");
        HttpResponse<String> second = get("/exports/acme");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(second.headers().firstValue("Retry-After")).hasValue("3600");
        assertThat(second.headers().firstValue("RateLimit")).hasValue("\"exports\";r=0;t=3600");
        assertThat(second.body()).contains("\"policies\":[\"exports\"]");
    }

    @Test
    void aMissingAnnotationKeyIsSkippedByDefaultAsForRulesNever500() throws Exception {
        List<HttpResponse<String>> anonymous = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            anonymous.add(get("/profile"));
        }
        HttpResponse<String> identified = get("/profile", "X-User", "erin");

        assertThat(anonymous).allSatisfy(response -> {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("RateLimit")).isEmpty();
        });
        assertThat(identified.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=1;t=3600");
    }

    @Test
    void aMissingAnnotationKeyCanBeRejectedWithAStatusAndAProblem() throws Exception {
        HttpResponse<String> rejected = get("/account");
        HttpResponse<String> identified = get("/account", "X-User", "frank");

        assertThat(rejected.statusCode()).isEqualTo(401);
        assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(rejected.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Unauthorized\",\"status\":401,\"detail\":"
                        + "\"This request must carry what its rate limit 'per-user' is keyed by.\"}");
        assertThat(identified.statusCode()).isEqualTo(200);
    }

    @Test
    void aMissingAnnotationKeyCanFallBackToTheClientIp() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            statuses.add(get("/feed").statusCode());
        }

        assertThat(statuses).containsExactly(200, 200, 429);
    }

    @Test
    void theRequestLimiterWarmedUpBeforeTheApplicationWasReadyLeavingOnlyItsOwnCount() throws Exception {
        HttpResponse<String> warmUp = get("/actuator/metrics/tollgate.warm_up.decisions");
        HttpResponse<String> limiterDecisions = get("/actuator/metrics/tollgate.decisions");
        HttpResponse<String> ruleDecisions = get("/actuator/metrics/tollgate.http.decisions");

        assertThat(warmUp.body()).containsPattern("\"statistic\":\"COUNT\",\"value\":[1-9]");
        assertThat(limiterDecisions.body() + ruleDecisions.body()).doesNotContain("warm-up");
    }

    @Test
    void theDecisionsAreActuatorMetrics() throws Exception {
        get("/users/carol/orders");

        HttpResponse<String> decisions = get("/actuator/metrics/tollgate.http.decisions");

        assertThat(decisions.statusCode()).isEqualTo(200);
        assertThat(decisions.body()).contains("\"name\":\"tollgate.http.decisions\"", "\"per-user\"");
    }

    @Test
    void theInMemoryLimitersDecisionsAreActuatorMetricsAsOnRedis() throws Exception {
        get("/users/dave/orders");

        HttpResponse<String> decisions = get("/actuator/metrics/tollgate.decisions?tag=source:memory");

        assertThat(decisions.statusCode()).isEqualTo(200);
        assertThat(decisions.body()).contains("\"name\":\"tollgate.decisions\"", "\"per-user\"");
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
