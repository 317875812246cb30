package io.tollgate.server;

import static io.tollgate.server.DecisionApiTest.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.testing.FreePorts;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The server as a reverse proxy in front of a real upstream, both on loopback. */
class ProxyTest {

    private static Upstream upstream;
    private final ManualTimeSource time = new ManualTimeSource();
    private RunningServer server;

    @BeforeAll
    static void startUpstream() throws IOException {
        upstream = Upstream.start();
    }

    @AfterAll
    static void stopUpstream() {
        upstream.close();
    }

    @AfterEach
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    private RunningServer start(String more) throws Exception {
        return start(more, "");
    }

    /** Starts the server with the rules below, {@code more} top-level settings and {@code moreServer} ones. */
    private RunningServer start(String more, String moreServer) throws Exception {
        server = RunningServer.start("""
                policies:
                  per-key:
                    limits:
                      - capacity: 3
                        refill: 1 per 10s
                rules:
                  - path: /api/**
                    key: header:X-API-Key
                    on-missing-key: fallback:ip
                    policy: per-key
                server:
                  upstream: %s
                  %s
                %s
                """.formatted(upstream.uri(), moreServer, more), time);
        return server;
    }

    @Test
    void aBurstPassesThenA429ThatNeverReachesTheUpstreamUntilRetryAfter() throws Exception {
        start("");
        int before = upstream.received().size();

        List<HttpResponse<String>> burst = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            burst.add(server.get("/api/orders", "X-API-Key", "k-1"));
        }
        HttpResponse<String> refused = server.get("/api/orders", "X-API-Key", "k-1");
        int reached = upstream.received().size() - before;
        time.advance(Duration.ofSeconds(10));
        HttpResponse<String> again = server.get("/api/orders", "X-API-Key", "k-1");

        assertThat(burst).allSatisfy(response -> {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("upstream saw GET /api/orders");
            assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"per-key\";q=3;w=30");
        });
        assertThat(burst.get(2).headers().firstValue("RateLimit")).hasValue("\"per-key\";r=0;t=30");
        assertProblem(refused, 429, "Rate limit exceeded for per-key; retry in 10 s.");
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("10");
        assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"per-key\";r=0;t=30");
        assertThat(reached).isEqualTo(3);
        assertThat(again.statusCode()).isEqualTo(200);
    }

    @Test
    void bearerTokensThatDifferOnlyInCaseHaveBucketsOfTheirOwnOnOneKeptAliveConnection() throws Exception {
        server = RunningServer.start("""
                policies:
                  per-token:
                    limits:
                      - capacity: 3
                        refill: 1/h
                rules:
                  - path: /api/**
                    key: header:Authorization
                    policy: per-token
                server:
                  upstream: %s
                """.formatted(upstream.uri()), time);

        List<Integer> statuses = new ArrayList<>();
        for (String token : List.of("Bearer Tok-A", "Bearer Tok-A", "Bearer Tok-A", "Bearer tok-a", "Bearer TOK-A")) {
            statuses.add(server.get("/api/orders", "Authorization", token).statusCode());
        }

        assertThat(statuses).containsExactly(200, 200, 200, 200, 200);
    }

    @Test
    void requestsThatMatchNoRouteAreProxiedUnlimited() throws Exception {
        start("");

        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            statuses.add(server.get("/public/page").statusCode());
        }
        HttpResponse<String> last = server.get("/public/page");

        assertThat(statuses).containsOnly(200);
        assertThat(last.headers().firstValue("RateLimit")).isEmpty();
    }

    @Test
    void methodPathQueryAndBodyReachTheUpstreamUnchanged() throws Exception {
        start("");
        byte[] body = "{\"order\": 42}".getBytes();

        HttpResponse<String> response = server.send(server.request(
                        "/api/orders/%7Bid%7D?a=1&b=x%20y", "X-API-Key", "k-2", "Content-Type", "application/json")
                .method("PATCH", HttpRequest.BodyPublishers.ofByteArray(body))
                .build());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("X-Upstream-Path")).hasValue("/api/orders/%7Bid%7D?a=1&b=x%20y");
        assertThat(response.headers().firstValue("X-Body-Sha256")).hasValue(sha256(body));
        Upstream.Received received = upstream.received().get(upstream.received().size() - 1);
        assertThat(received.method()).isEqualTo("PATCH");
        assertThat(received.header("Content-Type")).isEqualTo("application/json");
        assertThat(received.header("X-API-Key")).isEqualTo("k-2");
    }

    @Test
    void largeBodiesAreStreamedBothWays() throws Exception {
        start("", "max-body-size: 128MiB");
        long size = 64L * 1024 * 1024;
        MessageDigest sent = MessageDigest.getInstance("SHA-256");

        HttpResponse<String> upload = server.send(server.request("/files/upload")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new RandomBytes(size, sent)))
                .build());
        HttpResponse<InputStream> download = server.client()
                .send(server.request("/bytes/" + size).build(), HttpResponse.BodyHandlers.ofInputStream());
        long downloaded;
        try (InputStream in = download.body()) {
            downloaded = in.transferTo(java.io.OutputStream.nullOutputStream());
        }

        assertThat(upload.statusCode()).isEqualTo(200);
        assertThat(upload.headers().firstValue("X-Body-Bytes")).hasValue(Long.toString(size));
        assertThat(upload.headers().firstValue("X-Body-Sha256"))
                .hasValue(HexFormat.of().formatHex(sent.digest()));
        assertThat(downloaded).isEqualTo(size);
    }

    @Test
    void hopByHopHeadersAreNotForwardedEitherWay() throws Exception {
        start("");

        RawHttp.Answer answer = RawHttp.send(
                server.server().port(),
                "GET /hop HTTP/1.1\r\nHost: localhost\r\nConnection: X-Secret\r\nX-Secret: s3cret\r\n"
                        + "Keep-Alive: timeout=5\r\nProxy-Authorization: Basic Zm9vOmJhcg==\r\nTE: trailers\r\n"
                        + "X-Kept: yes");
        Upstream.Received received = upstream.received().get(upstream.received().size() - 1);

        assertThat(answer.status()).isEqualTo(200);
        assertThat(received.path()).isEqualTo("/hop");
        assertThat(received.header("X-Secret")).isNull();
        assertThat(received.header("Keep-Alive")).isNull();
        assertThat(received.header("Proxy-Authorization")).isNull();
        assertThat(received.header("TE")).isNull();
        assertThat(received.header("X-Kept")).isEqualTo("yes");
        assertThat(answer.header("Keep-Alive"))
                .as("the upstream's own hop-by-hop header")
                .isEmpty();
        assertThat(answer.header("X-Body-Bytes")).containsExactly("0");
    }

    @Test
    void forwardingHeadersTellTheUpstreamWhoAskedAndAClientCannotForgeThem() throws Exception {
        start("");

        server.get(
                "/who", "X-Forwarded-For", "6.6.6.6", "X-Forwarded-Host", "evil.example", "Forwarded", "for=6.6.6.6");
        Upstream.Received received = upstream.received().get(upstream.received().size() - 1);

        assertThat(received.header("X-Forwarded-For")).isEqualTo("127.0.0.1");
        assertThat(received.header("X-Forwarded-Proto")).isEqualTo("http");
        assertThat(received.header("X-Forwarded-Host"))
                .isEqualTo("127.0.0.1:" + server.server().port());
        assertThat(received.header("Forwarded")).isNull();
        assertThat(received.header("Via")).isEqualTo("1.1 tollgate");
    }

    @Test
    void behindATrustedProxyTheForwardingChainIsKeptAndExtended() throws Exception {
        start("client-ip: {trusted-proxies: [127.0.0.0/8]}");

        server.get(
                "/who",
                "X-Forwarded-For",
                "198.51.100.7",
                "X-Forwarded-Proto",
                "https",
                "X-Forwarded-Host",
                "api.example.com");
        Upstream.Received received = upstream.received().get(upstream.received().size() - 1);

        assertThat(received.header("X-Forwarded-For")).isEqualTo("198.51.100.7, 127.0.0.1");
        assertThat(received.header("X-Forwarded-Proto")).isEqualTo("https");
        assertThat(received.header("X-Forwarded-Host")).isEqualTo("api.example.com");
    }

    @Test
    void behindATrustedProxyEveryForwardedForLineGoesUpstreamAsTheLimiterReadIt() throws Exception {
        start("client-ip: {trusted-proxies: [127.0.0.0/8]}");

        server.get("/who", "X-Forwarded-For", "203.0.113.9", "X-Forwarded-For", "198.51.100.7");
        Upstream.Received received = upstream.received().get(upstream.received().size() - 1);

        assertThat(received.header("X-Forwarded-For")).isEqualTo("203.0.113.9, 198.51.100.7, 127.0.0.1");
    }

    @Test
    void anUntrustedClientsOwnClaimsOfItsAddressGoNoFurther() throws Exception {
        start("");

        server.get("/who", "X-Real-IP", "10.0.0.1", "True-Client-IP", "10.0.0.2", "CF-Connecting-IP", "10.0.0.3");
        Upstream.Received received = upstream.received().get(upstream.received().size() - 1);

        assertThat(received.header("X-Real-IP")).isNull();
        assertThat(received.header("True-Client-IP")).isNull();
        assertThat(received.header("CF-Connecting-IP")).isNull();
        assertThat(received.header("X-Forwarded-For")).isEqualTo("127.0.0.1");
    }

    @Test
    void aTrustedProxysClaimsOfTheClientsAddressGoUpstream() throws Exception {
        start("client-ip: {trusted-proxies: [127.0.0.0/8]}");

        server.get("/who", "X-Real-IP", "198.51.100.7");
        Upstream.Received received = upstream.received().get(upstream.received().size() - 1);

        assertThat(received.header("X-Real-IP")).isEqualTo("198.51.100.7");
    }

    @Test
    void aForgedForwardedForFromAnUntrustedPeerDoesNotChangeTheKey() throws Exception {
        start("");

        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            statuses.add(
                    server.get("/api/x", "X-Forwarded-For", "203.0.113." + i).statusCode());
        }

        assertThat(statuses).containsExactly(200, 200, 200, 429);
    }

    @Test
    void anUpstreamThatIsDownIs502() throws Exception {
        int closedPort = FreePorts.nobodyListens();
        server = RunningServer.start(
                "server: {upstream: http://127.0.0.1:" + closedPort + ", management-port: 0}\n", time);

        HttpResponse<String> response = server.get("/anything");

        assertProblem(response, 502, "The upstream could not be reached: ConnectException");
        assertThat(server.management("GET", "/metrics").body())
                .contains("tollgate_proxy_upstream_total{status=\"unreachable\"} 1.0");
    }

    @Test
    void anUpstreamThatDoesNotAnswerInTimeIs504() throws Exception {
        start("", "upstream-timeout: 300ms");

        HttpResponse<String> response = server.get("/slow");

        assertProblem(response, 504, "The upstream did not answer within 300 ms.");
    }

    @Test
    void connectionsToTheUpstreamAreKeptAliveAndPooled() throws Exception {
        try (Upstream own = Upstream.start()) {
            server = RunningServer.start("server: {upstream: " + own.uri() + "}\n", time);

            for (int i = 0; i < 50; i++) {
                assertThat(server.get("/pooled/" + i).statusCode()).isEqualTo(200);
            }

            assertThat(own.received()).hasSize(50);
            assertThat(own.connections()).isLessThanOrEqualTo(2);
        }
    }

    @Test
    void theUpstreamsCostHeaderChargesTheRestAndItsServerErrorsAreRefunded() throws Exception {
        server = RunningServer.start("""
                policies:
                  llm:
                    max-debt: 30s     # 15 tokens of debt fit
                    limits:
                      - capacity: 10
                        refill: 1/s
                rules:
                  - policy: llm
                    response-cost:
                      header: X-Tokens-Used
                      refund-statuses: [5xx]
                server:
                  upstream: %s
                  management-port: 0
                """.formatted(upstream.uri()), time);

        HttpResponse<String> costly = server.get("/v1/completions?used=25");
        String debt = awaitBucket("llm", "ip:127.0.0.1", "\"reset_after_ms\":25000");
        HttpResponse<String> next = server.get("/v1/completions?used=1");
        time.advance(Duration.ofSeconds(25));
        server.get("/status/502");
        String afterServerError = awaitBucket("llm", "ip:127.0.0.1", "\"reset_after_ms\":0");

        assertThat(costly.statusCode()).isEqualTo(200);
        assertThat(costly.headers().firstValue("X-Tokens-Used")).hasValue("25");
        assertThat(debt).contains("\"reset_after_ms\":25000");
        assertThat(next.statusCode()).isEqualTo(429);
        assertThat(next.headers().firstValue("Retry-After")).hasValue("16");
        assertThat(afterServerError).contains("\"reset_after_ms\":0");
    }

    @Test
    void aConcurrencyLimitHoldsTheSlotUntilTheUpstreamsAnswerHasGone() throws Exception {
        try (Upstream own = Upstream.start()) {
            server = RunningServer.start("""
                    concurrency-limits:
                      one-at-a-time:
                        max-in-flight: 1
                    rules:
                      - concurrency-limit: one-at-a-time
                    server:
                      upstream: %s
                    """.formatted(own.uri()), time);

            CompletableFuture<HttpResponse<String>> slow = server.client()
                    .sendAsync(
                            HttpRequest.newBuilder(server.uri("/slow")).build(), HttpResponse.BodyHandlers.ofString());
            for (int i = 0; i < 200 && own.received().isEmpty(); i++) {
                Thread.sleep(25);
            }
            HttpResponse<String> whileSlow = server.get("/fast");
            own.release();
            int slowStatus = slow.get(10, TimeUnit.SECONDS).statusCode();
            HttpResponse<String> after = server.get("/fast");
            for (int i = 0; i < 100 && after.statusCode() == 429; i++) { // the slot may trail the answer a little
                Thread.sleep(20);
                after = server.get("/fast");
            }

            assertProblem(whileSlow, 429, "Too many requests in flight for one-at-a-time; retry in 1 s.");
            assertThat(whileSlow.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(own.received()).extracting(Upstream.Received::path).containsExactly("/slow", "/fast");
            assertThat(slowStatus).isEqualTo(200);
            assertThat(after.statusCode()).isEqualTo(200);
        }
    }

    /** Reads a bucket on the admin API until it says {@code expected}: a settlement trails the answer a little. */
    private String awaitBucket(String policy, String key, String expected) throws InterruptedException {
        String bucket = "";
        for (int i = 0; i < 100 && !bucket.contains(expected); i++) {
            bucket = server.management("GET", "/admin/buckets/" + policy + "/" + key)
                    .body();
            Thread.sleep(i == 0 ? 0 : 50);
        }
        return bucket;
    }

    @Test
    void theUpstreamsAnswersAreCountedByStatus() throws Exception {
        start("", "management-port: 0");

        server.get("/status/503");
        server.get("/status/404");
        String metrics = server.management("GET", "/metrics").body();

        assertThat(metrics)
                .contains("tollgate_proxy_upstream_total{status=\"503\"} 1.0")
                .contains("tollgate_proxy_upstream_total{status=\"404\"} 1.0")
                .contains("tollgate_server_requests_seconds_count{handler=\"proxy\",status=\"503\"} 1");
    }

    @Test
    void malformedRequestsAreClientErrorProblemsNeverA500() throws Exception {
        start("");
        int port = server.server().port();

        RawHttp.Answer badEscape = RawHttp.send(port, "GET /api/%zz HTTP/1.1\r\nHost: localhost");
        RawHttp.Answer hugeHeader =
                RawHttp.send(port, "GET /api/x HTTP/1.1\r\nHost: localhost\r\nX-API-Key: " + "k".repeat(100_000));
        RawHttp.Answer ambiguous = RawHttp.send(port, "GET /api/%2e%2e/%2e%2e/etc HTTP/1.1\r\nHost: localhost");
        RawHttp.Answer noHost = RawHttp.send(port, "GET /api/x HTTP/1.1");
        RawHttp.Answer badQuery = RawHttp.send(port, "GET /api/x?key=%zz HTTP/1.1\r\nHost: localhost");

        for (RawHttp.Answer answer : List.of(badEscape, hugeHeader, ambiguous, noHost, badQuery)) {
            assertThat(answer.status()).isBetween(400, 499);
            assertThat(answer.header("Content-Type")).containsExactly("application/problem+json");
            assertThat(answer.body()).startsWith("{\"type\":\"about:blank\"").doesNotContain("at org.eclipse");
        }
        assertThat(hugeHeader.status()).isEqualTo(431);
        assertThat(badQuery.body()).contains("The request's URI cannot be forwarded");
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    /** {@code size} pseudo-random bytes, generated as they are read and added to a digest. */
    static final class RandomBytes extends InputStream {
        private final Random random = new Random(42);
        private final MessageDigest digest;
        private long left;

        RandomBytes(long size, MessageDigest digest) {
            this.left = size;
            this.digest = digest;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) {
            if (left == 0) {
                return -1;
            }
            int n = (int) Math.min(length, left);
            byte[] chunk = new byte[n];
            random.nextBytes(chunk);
            System.arraycopy(chunk, 0, buffer, offset, n);
            digest.update(chunk);
            left -= n;
            return n;
        }
    }
}
