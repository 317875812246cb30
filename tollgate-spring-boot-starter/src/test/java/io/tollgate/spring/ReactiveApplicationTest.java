package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.reactiveapp.ReactiveTestApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A reactive (WebFlux, Reactor Netty) Boot application on a random port, its limits from
 * application-reactive.yml, in memory: the web filter, {@code @RateLimit} on Mono and Flux handlers, the
 * client IP behind a trusted proxy, and refusals answered as the servlet filter answers them.
 */
@SpringBootTest(
        classes = ReactiveTestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "tollgate.redis.use-application-redis=false")
@AutoConfigureWebTestClient
@ActiveProfiles("reactive")
@DirtiesContext
class ReactiveApplicationTest {

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    WebTestClient web;

    @Test
    void theYamlRuleLimitsTheFilteredPaths() throws Exception {
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            responses.add(get("/api/hello", "X-Forwarded-For", "203.0.113.1"));
        }

        assertThat(responses).extracting(HttpResponse::statusCode).containsExactly(200, 200, 200, 429);
        assertThat(responses.get(0).headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=2;t=3600");
        assertThat(responses.get(0).body()).isEqualTo("{\"hello\":\"world\"}");
        HttpResponse<String> refused = responses.get(3);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("3600");
        assertThat(refused.headers().firstValue("Cache-Control")).hasValue("no-store");
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(refused.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit exceeded for per-ip; retry in 3600 s.\","
                        + "\"policies\":[\"per-ip\"],\"retry_after\":3600}");
    }

    @Test
    void aRulesResponseCostIsSettledWhenTheAnswerIsCommitted() throws Exception {
        HttpResponse<String> costly = get("/v1/completions?used=25", "X-Forwarded-For", "203.0.113.50");
        HttpResponse<String> next = get("/v1/completions?used=1", "X-Forwarded-For", "203.0.113.50");
        HttpResponse<String> failed = get("/v1/completions?used=9&status=503", "X-Forwarded-For", "203.0.113.51");
        HttpResponse<String> afterTheFailure = get("/v1/completions?used=1", "X-Forwarded-For", "203.0.113.51");

        assertThat(costly.statusCode()).isEqualTo(200);
        assertThat(costly.headers().firstValue("RateLimit")).hasValue("\"llm\";r=9;t=360");
        assertThat(next.statusCode()).isEqualTo(429);
        assertThat(next.headers().firstValue("Retry-After")).hasValue("5760"); // 16 tokens at one per 360 s
        assertThat(failed.statusCode()).isEqualTo(503);
        assertThat(afterTheFailure.headers().firstValue("RateLimit")).hasValue("\"llm\";r=9;t=360");
    }

    @Test
    void aRequestHoldsItsSlotUntilItsAnswerHasGone() throws Exception {
        CompletableFuture<HttpResponse<String>> running =
                client.sendAsync(request("/jobs/run", "X-Forwarded-For", "203.0.113.60"), BodyHandlers.ofString());
        assertThat(ReactiveTestApplication.JOBS_RUNNING.tryAcquire(10, TimeUnit.SECONDS))
                .as(
                        "%s",
                        running.isDone()
                                ? running.join().statusCode() + " "
                                        + running.join().body()
                                : "pending")
                .isTrue();
        HttpResponse<String> whileRunning = get("/jobs/run", "X-Forwarded-For", "203.0.113.60");
        ReactiveTestApplication.JOBS_DONE.tryEmitEmpty();
        HttpResponse<String> ran = running.get(10, TimeUnit.SECONDS);
        HttpResponse<String> next = get("/jobs/run", "X-Forwarded-For", "203.0.113.60");

        assertThat(whileRunning.statusCode()).isEqualTo(429);
        assertThat(whileRunning.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(whileRunning.body()).contains("\"detail\":\"Too many requests in flight for jobs; retry in 1 s.\"");
        assertThat(ran.body()).isEqualTo("done");
        assertThat(next.statusCode()).isEqualTo(200);
    }

    @Test
    void aRequestThatFailsGivesItsSlotBack() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            statuses.add(get("/jobs/fail", "X-Forwarded-For", "203.0.113.61").statusCode());
        }

        assertThat(statuses).containsExactly(500, 500, 500); // one slot: a kept one would make the next 429
    }

    @Test
    void eachClientBehindTheTrustedProxyHasItsOwnBucket() throws Exception {
        for (int i = 0; i < 3; i++) {
            get("/api/hello", "X-Forwarded-For", "198.51.100.7");
        }

        HttpResponse<String> sameClient = get("/api/hello", "X-Forwarded-For", "198.51.100.7");
        HttpResponse<String> otherClient = get("/api/hello", "X-Forwarded-For", "198.51.100.8");
        HttpResponse<String> throughTwoProxies = get("/api/hello", "X-Forwarded-For", "198.51.100.9, 127.0.0.1");

        assertThat(sameClient.statusCode()).isEqualTo(429);
        assertThat(otherClient.statusCode()).isEqualTo(200);
        assertThat(throughTwoProxies.statusCode()).isEqualTo(200);
        assertThat(throughTwoProxies.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=2;t=3600");
    }

    @Test
    void pathsNoRuleMatchesAreNotLimitedByTheFilter() {
        web.get()
                .uri("/users/ivan/feed")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .valueEquals("RateLimit", "\"per-user\";r=1;t=3600");
    }

    @Test
    void theAnnotationLimitsAMonoHandlerByTheKeyItNames() {
        List<Integer> alice = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            alice.add(web.get()
                    .uri("/users/alice/orders")
                    .exchange()
                    .returnResult(String.class)
                    .getStatus()
                    .value());
        }

        web.get()
                .uri("/users/bob/orders")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .valueEquals("RateLimit", "\"per-user\";r=1;t=3600")
                .expectBody(String.class)
                .isEqualTo("{\"user\":\"bob\"}");
        web.get()
                .uri("/users/alice/orders")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectHeader()
                .valueEquals("Retry-After", "3600")
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody(String.class)
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit exceeded for per-user; retry in 3600 s.\","
                        + "\"policies\":[\"per-user\"],\"retry_after\":3600}");
        assertThat(alice).containsExactly(200, 200, 429);
    }

    @Test
    void theDocumentedHandlersAreLimitedAsThePageSays() throws Exception {
        HttpResponse<String> firstOrders = get("/api/users/kim/orders", "X-Forwarded-For", "203.0.113.30");
        get("/api/users/kim/orders", "X-Forwarded-For", "203.0.113.31");
        HttpResponse<String> thirdOrders = get("/api/users/kim/orders", "X-Forwarded-For", "203.0.113.32");
        HttpResponse<String> withKey = get("/quota", "X-API-Key", "k-1");
        HttpResponse<String> withoutKey = get("/quota");

        assertThat(firstOrders.statusCode()).isEqualTo(200);
        assertThat(firstOrders.body()).startsWith("[{").contains("\"id\":1", "\"user\":\"kim\"");
        assertThat(firstOrders.headers().allValues("RateLimit"))
                .containsExactly("\"per-ip\";r=2;t=3600", "\"per-user\";r=1;t=3600");
        assertThat(thirdOrders.statusCode()).isEqualTo(429);
        assertThat(withKey.statusCode()).isEqualTo(200);
        assertThat(withKey.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=1;t=3600");
        assertThat(withoutKey.statusCode()).isEqualTo(401);
    }

    @Test
    void theAnnotationLimitsAFluxHandler() throws Exception {
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            responses.add(get("/users/judy/feed"));
        }

        assertThat(responses).extracting(HttpResponse::statusCode).containsExactly(200, 200, 429);
        assertThat(responses.get(0).body()).isEqualTo("abc");
        assertThat(responses.get(2).body()).contains("\"policies\":[\"per-user\"]");
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
    void theAnnotationKeysByTheClientIpBehindTheProxyByDefault() throws Exception {
        int first = get("/search", "X-Forwarded-For", "192.0.2.10").statusCode();
        int second = get("/search", "X-Forwarded-For", "192.0.2.10").statusCode();
        int another = get("/search", "X-Forwarded-For", "192.0.2.11").statusCode();

        assertThat(first).isEqualTo(200);
        assertThat(second).isEqualTo(429);
        assertThat(another).isEqualTo(200);
    }

    @Test
    void aRateLimitExceededExceptionAsTheStreamsErrorIsAnswered429() throws Exception {
        HttpResponse<String> first = get("/exports/acme");
        HttpResponse<String> second = get("/exports/acme");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(second.headers().firstValue("Retry-After")).hasValue("3600");
        assertThat(second.headers().firstValue("RateLimit")).hasValue("\"exports\";r=0;t=3600");
        assertThat(second.body()).contains("\"policies\":[\"exports\"]");
    }

    @Test
    void theDecisionsAreActuatorMetrics() throws Exception {
        get("/users/carol/orders");

        HttpResponse<String> decisions = get("/actuator/metrics/tollgate.http.decisions");

        assertThat(decisions.statusCode()).isEqualTo(200);
        assertThat(decisions.body()).contains("\"name\":\"tollgate.http.decisions\"", "\"per-user\"");
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        return client.send(request(path, headers), BodyHandlers.ofString());
    }

    private HttpRequest request(String path, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return request.build();
    }
}
