package io.tollgate.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.Decision;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.http.ClientIpResolver;
import io.tollgate.http.ClientKey;
import io.tollgate.http.MissingKey;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The filter protecting a real Jetty application, driven by a real HTTP client over loopback. */
class TollgateFilterTest {

    private static final Policy THREE_PER_10S = Policy.of("per-ip", Limit.of(3, Rate.of(1, Duration.ofSeconds(10))));
    private static final Policy ONE = Policy.of("one", Limit.of(1, Rate.perMinute(1)));

    private final ManualTimeSource time = new ManualTimeSource();
    private final InMemoryRateLimiter limiter =
            InMemoryRateLimiter.builder().timeSource(time).build();
    private JettyApp app;

    @AfterEach
    void stop() throws Exception {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void aBurstOfCapacityPassesAndTheNextRequestIsRefusedWith429() throws Exception {
        app = JettyApp.start(filter(Rule.builder(THREE_PER_10S).path("/api/**").build()));

        List<HttpResponse<String>> burst = List.of(app.get("/api/a"), app.get("/api/b"), app.get("/api/c"));
        HttpResponse<String> refused = app.get("/api/d");

        assertThat(burst).extracting(HttpResponse::statusCode).containsOnly(200);
        assertThat(burst)
                .extracting(
                        response -> response.headers().firstValue("RateLimit").orElseThrow())
                .containsExactly("\"per-ip\";r=2;t=10", "\"per-ip\";r=1;t=20", "\"per-ip\";r=0;t=30");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("10");
        assertThat(refused.headers().firstValue("Cache-Control")).hasValue("no-store");
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(refused.headers().firstValue("RateLimit-Policy")).hasValue("\"per-ip\";q=3;w=30");
        assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=0;t=30");
        assertThat(refused.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit exceeded for per-ip; retry in 10 s.\","
                        + "\"policies\":[\"per-ip\"],\"retry_after\":10}");
        assertThat(app.served()).isEqualTo(3);
    }

    @Test
    void aRefusedClientPassesAgainAfterRetryAfter() throws Exception {
        app = JettyApp.start(filter(Rule.builder(THREE_PER_10S).build()));
        for (int i = 0; i < 3; i++) {
            app.get("/");
        }
        HttpResponse<String> refused = app.get("/");
        long retryAfter =
                Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());

        time.advance(Duration.ofSeconds(retryAfter).minusMillis(1));
        HttpResponse<String> early = app.get("/");
        time.advance(Duration.ofMillis(1));
        HttpResponse<String> onTime = app.get("/");

        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(early.statusCode()).isEqualTo(429);
        assertThat(onTime.statusCode()).isEqualTo(200);
        assertThat(onTime.body()).isEqualTo("hello /");
    }

    @Test
    void requestsNoRuleAppliesToPassWithoutHeaders() throws Exception {
        app = JettyApp.start(filter(Rule.builder(ONE).path("/api/**").build()));
        app.get("/api/x");

        HttpResponse<String> health = app.get("/health");

        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.headers().firstValue("RateLimit")).isEmpty();
    }

    @Test
    void anEncodedOrDotSegmentPathCannotDodgeARule() throws Exception {
        app = JettyApp.start(filter(Rule.builder(ONE).path("/api/**").build()));

        int plain = app.get("/api/x").statusCode();
        int encoded = app.get("/%61pi/x").statusCode();
        int dotted = app.sendRaw("GET /public/../api/x HTTP/1.1\r\nHost: localhost");

        assertThat(plain).isEqualTo(200);
        assertThat(encoded).isEqualTo(429);
        assertThat(dotted).isEqualTo(429);
    }

    // Jetty's own URI compliance refuses empty segments, ambiguous parameters and encoded dots before any filter
    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "//api/x          | 400 400 400 400",
                "/api//x          | 400 400 400 400",
                "/API/x           | 200 200 200 429",
                "/api/./x         | 200 200 200 429",
                "/x/../api/x      | 200 200 200 429",
                "/x/..;/api/x     | 400 400 400 400",
                "/api/x;v=1       | 200 200 200 429",
                "/api/;v=1/x      | 400 400 400 400",
                "/x/%2e%2e/api/x  | 400 400 400 400",
                "/api\\x        | 400 400 400 400",
                "/api%5Cx         | 400 400 400 400",
                "/api%2Fx         | 400 400 400 400",
                "/api/x%00        | 400 400 400 400",
            })
    void everyFormOfAPathCountsUnderTheRuleOfItsNormalFormOrIsRefused(String path, String statuses) throws Exception {
        app = JettyApp.start(filter(Rule.builder(THREE_PER_10S).path("/api/**").build()));

        List<Integer> answered = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            answered.add(app.sendRaw("GET " + path + " HTTP/1.1\r\nHost: localhost"));
        }

        assertThat(answered)
                .containsExactlyElementsOf(
                        Arrays.stream(statuses.split(" ")).map(Integer::valueOf).toList());
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "//api/x          | 200 200 200 429",
                "/api//x          | 200 200 200 429",
                "/x/..;/api/x     | 200 200 200 429",
                "/api/;v=1/x      | 200 200 200 429",
                "/x/%2e%2e/api/x  | 200 200 200 429",
                "/api\\x        | 400 400 400 400",
                "/api%5Cx         | 400 400 400 400",
                "/api%2Fx         | 400 400 400 400",
                "/api/%c0%ae%c0%ae/x | 400 400 400 400",
            })
    void inAContainerThatPassesEveryUriOnTheFilterItselfCountsOrRefusesEachForm(String path, String statuses)
            throws Exception {
        app = JettyApp.startAcceptingEveryUri(
                filter(Rule.builder(THREE_PER_10S).path("/api/**").build()));

        List<Integer> answered = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            answered.add(app.sendRaw("GET " + path + " HTTP/1.1\r\nHost: localhost"));
        }

        assertThat(answered)
                .containsExactlyElementsOf(
                        Arrays.stream(statuses.split(" ")).map(Integer::valueOf).toList());
    }

    @Test
    void aForgedForwardedForFromAnUntrustedPeerDoesNotChangeTheKey() throws Exception {
        app = JettyApp.start(filter(Rule.builder(ONE).build()));

        int first = app.get("/", "X-Forwarded-For", "198.51.100.1").statusCode();
        int forged = app.get("/", "X-Forwarded-For", "198.51.100.2").statusCode();

        assertThat(first).isEqualTo(200);
        assertThat(forged).isEqualTo(429);
    }

    @Test
    void behindATrustedProxyEachForwardedClientHasItsOwnBucket() throws Exception {
        app = JettyApp.start(new TollgateFilter(RequestLimiter.builder(limiter)
                .rule(Rule.builder(ONE).build())
                .clientIps(ClientIpResolver.builder()
                        .trustedProxies(List.of("127.0.0.0/8"))
                        .build())
                .build()));

        int first = app.get("/", "X-Forwarded-For", "198.51.100.1").statusCode();
        int second = app.get("/", "X-Forwarded-For", "198.51.100.2").statusCode();
        int firstAgain =
                app.get("/", "X-Forwarded-For", "203.0.113.9, 198.51.100.1").statusCode();

        assertThat(first).isEqualTo(200);
        assertThat(second).isEqualTo(200);
        assertThat(firstAgain).isEqualTo(429);
    }

    @Test
    void aRequestWithoutTheRequiredApiKeyGetsA401Problem() throws Exception {
        app = JettyApp.start(filter(Rule.builder(THREE_PER_10S)
                .key(ClientKey.header("X-API-Key"))
                .onMissingKey(MissingKey.reject(401))
                .build()));

        HttpResponse<String> missing = app.get("/");
        HttpResponse<String> present = app.get("/", "X-API-Key", "k-1");

        assertThat(missing.statusCode()).isEqualTo(401);
        assertThat(missing.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(missing.body()).contains("\"detail\":\"This request must carry header:X-API-Key.\"");
        assertThat(present.statusCode()).isEqualTo(200);
    }

    @Test
    void aDryRunRuleReportsButNeverRefuses() throws Exception {
        app = JettyApp.start(filter(Rule.builder(ONE).dryRun(true).build()));

        HttpResponse<String> first = app.get("/");
        HttpResponse<String> second = app.get("/");

        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"one\";r=0;t=60");
        assertThat(second.headers().firstValue("RateLimit")).hasValue("\"one\";r=0;t=60");
        assertThat(second.headers().firstValue("Retry-After")).isEmpty();
    }

    @Test
    void aForwardedRequestIsChargedOnce() throws Exception {
        app = JettyApp.start(filter(Rule.builder(THREE_PER_10S).build()));

        int first = app.get("/forward/x").statusCode();
        int second = app.get("/forward/y").statusCode();
        int third = app.get("/forward/z").statusCode();
        int fourth = app.get("/forward/w").statusCode();

        assertThat(List.of(first, second, third, fourth)).containsExactly(200, 200, 200, 429);
    }

    @Test
    void badRequestsNeverYieldAServerError() throws Exception {
        app = JettyApp.start(filter(
                Rule.builder(THREE_PER_10S)
                        .key(ClientKey.query("key"))
                        .onMissingKey(MissingKey.fallback(ClientKey.ip()))
                        .build(),
                Rule.builder(Policy.of("per-key", Limit.of(100, Rate.perSecond(100))))
                        .key(ClientKey.header("X-API-Key"))
                        .build(),
                Rule.builder(Policy.of("nested", Limit.of(100, Rate.perSecond(100))))
                        .path("/**/a/**/b/**/c/*x")
                        .build()));

        int hugeHeader = app.sendRaw("GET /api HTTP/1.1\r\nHost: localhost\r\nX-API-Key: " + "k".repeat(100_000));
        int invalidEscape = app.sendRaw("GET /api/%zz HTTP/1.1\r\nHost: localhost");
        int truncatedEscape = app.sendRaw("GET /api/%4 HTTP/1.1\r\nHost: localhost");
        int encodedNul = app.sendRaw("GET /api/%00 HTTP/1.1\r\nHost: localhost");
        int invalidQueryEscape = app.sendRaw("GET /api?key=%zz HTTP/1.1\r\nHost: localhost");
        int longKey = app.get("/api", "X-API-Key", "k".repeat(4_000)).statusCode();
        int thousandsOfSegments = app.sendRaw("GET " + "/a".repeat(3_500) + " HTTP/1.1\r\nHost: localhost");

        assertThat(List.of(
                        hugeHeader,
                        invalidEscape,
                        truncatedEscape,
                        encodedNul,
                        invalidQueryEscape,
                        thousandsOfSegments))
                .allSatisfy(status -> assertThat(status).isBetween(200, 499));
        assertThat(hugeHeader).isEqualTo(431);
        assertThat(invalidEscape).isEqualTo(400);
        assertThat(invalidQueryEscape).isEqualTo(200);
        assertThat(longKey).isEqualTo(200);
        assertThat(thousandsOfSegments).isEqualTo(200);
    }

    @Test
    void aFailingLimiterGivesA500ProblemWithoutAStackTrace() throws Exception {
        app = JettyApp.start(new TollgateFilter(RequestLimiter.builder(new BrokenLimiter())
                .rule(Rule.builder(ONE).build())
                .build()));

        HttpResponse<String> response = app.get("/");

        assertThat(response.statusCode()).isEqualTo(500);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(response.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Internal Server Error\",\"status\":500,"
                        + "\"detail\":\"The rate limiter failed; the server log says why.\"}");
    }

    private TollgateFilter filter(Rule... rules) {
        return new TollgateFilter(
                RequestLimiter.builder(limiter).rules(List.of(rules)).build());
    }

    /** A limiter with a bug: every call throws. */
    private static final class BrokenLimiter implements RateLimiter {
        @Override
        public Decision tryAcquire(String key, Policy policy, long cost) {
            throw new IllegalStateException("bug in a custom limiter");
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, Policy policy, long cost) {
            throw new IllegalStateException("bug in a custom limiter");
        }

        @Override
        public boolean acquire(String key, Policy policy, long cost, Duration maxWait) {
            throw new IllegalStateException("bug in a custom limiter");
        }
    }
}
