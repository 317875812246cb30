package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.tollgate.Priority;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.http.OverloadProtection;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The server's proxy protecting its upstream from overload: requests in flight to it kept under the limit, the
 * lowest priority refused first with a 503 of its own that takes no tokens, and the limit learnt from the upstream's
 * failures. The upstream holds each request to {@code /hold} until the test lets it go.
 */
class OverloadProxyTest {

    private final CountDownLatch hold = new CountDownLatch(1);
    private final AtomicInteger holding = new AtomicInteger();
    private final List<String> reached = new java.util.concurrent.CopyOnWriteArrayList<>();
    private HttpServer upstream;
    private RunningServer server;

    @BeforeEach
    void startUpstream() throws IOException {
        upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        upstream.setExecutor(Executors.newCachedThreadPool());
        upstream.createContext("/", this::serve);
        upstream.start();
    }

    @AfterEach
    void stop() {
        hold.countDown();
        if (server != null) {
            server.close();
        }
        upstream.stop(0);
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            reached.add(path);
            int status = 200;
            if (path.endsWith("/hold")) {
                holding.incrementAndGet();
                hold.await(30, TimeUnit.SECONDS);
            } else if (path.contains("/status/")) {
                status = Integer.parseInt(path.substring(path.lastIndexOf('/') + 1));
            }
            byte[] body = "served".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Starts the server with overload protection of {@code overload} (YAML flow keys) in front of the upstream. */
    private void start(String overload) throws Exception {
        server = RunningServer.start(
                """
                policies:
                  per-user:
                    limits: [{capacity: 5, refill: 1 per 1h}]
                rules:
                  - path: /batch/**
                    key: header:X-User
                    policy: per-user
                    priority: sheddable
                  - path: /api/**
                    key: header:X-User
                    policy: per-user
                overload: {enabled: true, %s}
                server:
                  upstream: http://127.0.0.1:%d
                  management-port: 0
                """.formatted(overload, upstream.getAddress().getPort()));
    }

    private List<CompletableFuture<HttpResponse<String>>> holdRequests(String path, int count) throws Exception {
        return holdRequests(path, count, "X-User", "u");
    }

    private List<CompletableFuture<HttpResponse<String>>> holdRequests(String path, int count, String... headers)
            throws Exception {
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            held.add(server.client()
                    .sendAsync(server.request(path, headers).GET().build(), HttpResponse.BodyHandlers.ofString()));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (holding.get() < count && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(holding).as("requests held by the upstream").hasValue(count);
        return held;
    }

    @Test
    void aFullUpstreamIsProtectedByA503ThatNeverReachesItAndTakesNoTokens() throws Exception {
        start("min-limit: 2, initial-limit: 2, max-limit: 2, critical-reserve: 0, default-reserve: 0, max-wait: 0");
        List<CompletableFuture<HttpResponse<String>>> held = holdRequests("/api/hold", 2);

        HttpResponse<String> shed = server.get("/api/more", "X-User", "u");

        assertThat(shed.statusCode()).isEqualTo(503);
        assertThat(shed.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(shed.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(shed.headers().firstValue("RateLimit")).isEmpty();
        assertThat(shed.body())
                .startsWith("{\"type\":\"urn:tollgate:overloaded\",\"title\":\"Service overloaded\",\"status\":503,")
                .contains("(this one is default)");
        assertThat(reached).doesNotContain("/api/more");

        hold.countDown();
        for (CompletableFuture<HttpResponse<String>> request : held) {
            assertThat(request.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        HttpResponse<String> after = server.get("/api/after", "X-User", "u");
        assertThat(after.statusCode()).isEqualTo(200);
        assertThat(after.headers().firstValue("RateLimit").orElseThrow())
                .as("5 tokens less the two held and this one: the shed request took none")
                .contains(";r=2;");
    }

    @Test
    void sheddableRequestsAreRefusedWhileDefaultOnesStillFindRoom() throws Exception {
        start("min-limit: 2, initial-limit: 2, max-limit: 2, critical-reserve: 0, default-reserve: 0.5, max-wait: 0");
        List<CompletableFuture<HttpResponse<String>>> held = holdRequests("/api/hold", 1);

        HttpResponse<String> batch = server.get("/batch/job", "X-User", "b");
        hold.countDown();
        HttpResponse<String> api = server.get("/api/x", "X-User", "a");

        assertThat(batch.statusCode()).isEqualTo(503);
        assertThat(batch.body()).contains("(this one is sheddable)");
        assertThat(api.statusCode()).isEqualTo(200);
        assertThat(held.get(0).get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        String metrics = server.management("GET", "/metrics").body();
        assertThat(metrics)
                .contains("tollgate_http_overload_requests_total{outcome=\"shed\",priority=\"sheddable\"} 1.0")
                .contains("tollgate_http_overload_requests_total{outcome=\"admitted\",priority=\"default\"} 2.0");
    }

    @Test
    void thePagesConfigurationGivesEachPlanAndRuleItsPriorityAndAnswersAsShown() throws Exception {
        String page = "docs/load-shedding.md";
        String yaml = DocumentationExamples.blocks(page, "yaml")
                .get(0)
                .replace(
                        "http://127.0.0.1:9000",
                        "http://127.0.0.1:" + upstream.getAddress().getPort())
                .replace("management-port: 9090", "management-port: 0");
        String shown = DocumentationExamples.blocks(page, "text").get(0);
        ServerConfig config = ServerConfig.parse(yaml, page);
        server = RunningServer.start(yaml);
        holdRequests("/api/exports/hold", 1, "X-Api-Key", "k-2");

        HttpResponse<String> gold = server.get("/api/report", "X-Api-Key", "k-1", "X-Plan", "gold");

        assertThat(config.overload())
                .isEqualTo(new OverloadProtection.Settings(
                        4, 20, 1000, 0.1, 0.2, java.time.Duration.ofMillis(50), java.time.Duration.ofSeconds(1)));
        assertThat(config.rules().get(1).priority()).isEqualTo(Priority.SHEDDABLE);
        assertThat(gold.statusCode()).isEqualTo(200);
        assertThat(server.management("GET", "/metrics").body())
                .contains("tollgate_http_overload_requests_total{outcome=\"admitted\",priority=\"critical\"} 1.0")
                .contains("tollgate_http_overload_requests_total{outcome=\"admitted\",priority=\"sheddable\"} 1.0");
        String body = shown.substring(shown.indexOf('{')).strip();
        assertThat(shown).contains("Retry-After: 1", "Content-Type: application/problem+json");
        assertThat(body)
                .isEqualTo("{\"type\":\"urn:tollgate:overloaded\",\"title\":\"Service overloaded\",\"status\":503,"
                        + "\"detail\":\"The service is overloaded and serves the most important requests first (this"
                        + " one is sheddable); retry in 1 s.\",\"retry_after\":1}");
    }

    @Test
    void failuresOfTheUpstreamLowerTheLimitItLearns() throws Exception {
        start("min-limit: 1, initial-limit: 20, max-limit: 100");

        for (int status : new int[] {500, 502, 503}) {
            assertThat(server.get("/api/status/" + status, "X-User", "u" + status)
                            .statusCode())
                    .isEqualTo(status);
        }

        String metrics = server.management("GET", "/metrics").body();
        assertThat(metrics)
                .contains("tollgate_http_overload_limit 14.0") // 20 x 0.9^3
                .contains("tollgate_http_overload_in_flight 0.0")
                .contains("tollgate_http_overload_waiting 0.0");
    }
}
