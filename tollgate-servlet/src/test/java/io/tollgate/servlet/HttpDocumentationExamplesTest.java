package io.tollgate.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tollgate.ConcurrencyLimit;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.fixtures.ManualTimeSource;
import io.tollgate.http.ClientIpResolver;
import io.tollgate.http.ClientKey;
import io.tollgate.http.MicrometerRequestMetrics;
import io.tollgate.http.MissingKey;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.RequestLimiterConfig;
import io.tollgate.http.ResponseCost;
import io.tollgate.http.Rule;
import io.tollgate.redis.RedisRateLimiter;
import io.tollgate.testing.RedisExtension;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterRegistration;
import java.io.ByteArrayInputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Runs what docs/http.md shows: each Java example written out exactly as the page has it, followed by
 * assertions; every YAML file on the page is read, the {@code web.xml} fragment is run, and the example
 * exchanges are compared with what the filter really answers. The last test fails if the page shows Java
 * code that is not in this file.
 */
class HttpDocumentationExamplesTest {

    private static final String PAGE = "docs/http.md";

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final Policy perIp = Policy.of("per-ip", Limit.of(100, Rate.perMinute(100)));

    @Test
    void theServletFilterInFiveLines() throws Exception {
        RateLimiter limiter = InMemoryRateLimiter.create();
        try (JettyApp app = JettyApp.startRegisteringItself(context ->
                context.addServletContainerInitializer((classes, servletContext) -> {
                    // --- http: five lines
                    Policy perIp = Policy.of("per-ip", Limit.of(100, Rate.perMinute(100)));
                    Policy perKey = Policy.of(
                            "per-key",
                            Limit.of(10, Rate.perSecond(5)), // bursts of 10, then 5 per second
                            Limit.of(10_000, Rate.perDay(10_000))); // and 10 000 a day

                    RequestLimiter requests = RequestLimiter.builder(limiter)
                            .rule(Rule.builder(perIp).path("/api/**").build())
                            .rule(Rule.builder(perKey)
                                    .path("/api/**")
                                    .methods("POST", "PUT", "DELETE")
                                    .key(ClientKey.header("X-API-Key"))
                                    .onMissingKey(MissingKey.reject(401))
                                    .build())
                            .clientIps(ClientIpResolver.builder()
                                    .trustedProxies(List.of("10.0.0.0/8")) // the load balancers
                                    .build())
                            .build();

                    FilterRegistration.Dynamic tollgate =
                            servletContext.addFilter("tollgate", new TollgateFilter(requests));
                    tollgate.setAsyncSupported(true);
                    tollgate.addMappingForUrlPatterns(
                            EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC), false, "/*");
                    // ---
                }))) {

            HttpResponse<String> read = app.get("/api/orders");
            HttpResponse<String> anonymousWrite = app.send("POST", "/api/orders");
            HttpResponse<String> write = app.send("POST", "/api/orders", "X-API-Key", "k-1");

            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(read.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=99;t=1");
            assertThat(anonymousWrite.statusCode()).isEqualTo(401);
            assertThat(write.statusCode()).isEqualTo(200);
            assertThat(write.headers().firstValue("RateLimit-Policy"))
                    .hasValue("\"per-ip\";q=100;w=60, \"per-key.0\";q=10;w=2, \"per-key.1\";q=10000;w=86400");
        }
    }

    @Test
    void aRedisLimiterBehindTheFilter() throws Exception {
        String redisUri = redis.server().uri();

        // --- http: redis
        RateLimiter limiter = RedisRateLimiter.builder().uri(redisUri).build();
        // ---

        try (JettyApp app = JettyApp.start(new TollgateFilter(RequestLimiter.builder(limiter)
                .rule(Rule.builder(perIp).build())
                .build()))) {
            assertThat(app.get("/").headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=99;t=1");
        } finally {
            ((RedisRateLimiter) limiter).close();
        }
    }

    @Test
    void narrowRulesBeforeWideOnes() throws Exception {
        RateLimiter limiter = InMemoryRateLimiter.create();
        Policy perKey = Policy.of("per-key", Limit.of(2, Rate.perHour(2)));
        Policy everyone = Policy.of("everyone", Limit.of(1_000, Rate.perHour(1_000)));

        // --- http: several rules
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(perKey).key(ClientKey.header("X-API-Key")).build()) // each client's own limit
                .rule(Rule.builder(everyone).key(ClientKey.constant("all")).build()) // one bucket for all clients
                .build();
        // ---

        try (JettyApp app = JettyApp.start(new TollgateFilter(requests))) {
            for (int i = 0; i < 50; i++) {
                app.get("/", "X-API-Key", "flooder");
            }
            HttpResponse<String> polite = app.get("/", "X-API-Key", "polite");

            assertThat(polite.headers().firstValue("RateLimit"))
                    .hasValue("\"per-key\";r=1;t=1800, \"everyone\";r=997;t=11");
        }
    }

    @Test
    void theExampleExchangesAreWhatTheFilterAnswers() throws Exception {
        ManualTimeSource time = new ManualTimeSource();
        RateLimiter limiter = InMemoryRateLimiter.builder().timeSource(time).build();
        try (JettyApp app = JettyApp.start(new TollgateFilter(RequestLimiter.builder(limiter)
                .rule(Rule.builder(perIp).build())
                .build()))) {
            List<HttpResponse<String>> responses = new ArrayList<>();
            for (int i = 0; i < 101; i++) {
                responses.add(app.get("/"));
            }
            List<String> exchanges = DocumentationExamples.blocks(PAGE, "http");

            assertThat(exchanges).hasSize(2);
            assertMatches(exchanges.get(0), responses.get(100));
            assertMatches(exchanges.get(1), responses.get(57));
        }
    }

    @Test
    void aCustomRefusalBody() throws Exception {
        RateLimiter limiter = InMemoryRateLimiter.create();

        // --- http: refusal body
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(Rule.builder(perIp).build())
                .refusalStatus(503)
                .refusalBody(
                        "application/json",
                        refusal -> "{\"error\":\"rate_limited\",\"retry_after\":" + refusal.retryAfterSeconds() + "}")
                .build();
        // ---

        try (JettyApp app = JettyApp.start(new TollgateFilter(requests))) {
            for (int i = 0; i < 100; i++) {
                app.get("/");
            }
            HttpResponse<String> refused = app.get("/");

            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/json");
            assertThat(refused.body()).isEqualTo("{\"error\":\"rate_limited\",\"retry_after\":1}");
        }
    }

    @Test
    void aDryRunRuleWithMetrics() throws Exception {
        RateLimiter limiter = InMemoryRateLimiter.create();
        MeterRegistry meterRegistry = new SimpleMeterRegistry();
        Policy perIp = Policy.of("per-ip", Limit.of(2, Rate.perHour(2)));

        // --- http: dry run
        Rule shadow = Rule.builder(perIp).path("/api/**").dryRun(true).build();
        // ---
        // --- http: metrics
        RequestLimiter requests = RequestLimiter.builder(limiter)
                .rule(shadow)
                .metrics(MicrometerRequestMetrics.of(meterRegistry))
                .build();
        // ---

        try (JettyApp app = JettyApp.start(new TollgateFilter(requests))) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                statuses.add(app.get("/api/x").statusCode());
            }

            assertThat(statuses).containsOnly(200);
            assertThat(meterRegistry
                            .get("tollgate.http.decisions")
                            .tags("policy", "per-ip", "outcome", "refused", "dry_run", "true")
                            .counter()
                            .count())
                    .isEqualTo(3);
        }
    }

    @Test
    void chargingAfterTheResponse(@TempDir Path dir) throws Exception {
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().timeSource(new ManualTimeSource()).build();

        // --- http: charging after the response
        Policy tokensPerMinute = Policy.of("llm-tokens", Limit.of(10_000, Rate.perMinute(10_000)));
        Policy failedLogins = Policy.of("failed-logins", Limit.of(5, Rate.perMinute(1)));

        Rule completions = Rule.builder(tokensPerMinute)
                .path("/v1/completions")
                .key(ClientKey.header("X-API-Key"))
                .cost(1_000) // taken up front: a team with less left is refused before the model runs
                .responseCost(ResponseCost.fromHeader("X-Tokens-Used").refunding("5xx"))
                .build();
        Rule logins = Rule.builder(failedLogins)
                .path("/login")
                .methods("POST")
                .responseCost(ResponseCost.onlyForStatuses("401", "403"))
                .build();
        // ---

        String file = DocumentationExamples.blocks(PAGE, "yaml").get(1);
        RequestLimiterConfig fromFile = RequestLimiterConfig.load(Files.writeString(dir.resolve("llm.yaml"), file));
        assertThat(fromFile.rules()).containsExactly(completions, logins);
        try (JettyApp app = JettyApp.start(new TollgateFilter(fromFile.newRequestLimiter(limiter)))) {
            HttpResponse<String> used8000 = app.get("/v1/completions?used=8000", "X-API-Key", "k-1");
            HttpResponse<String> next = app.get("/v1/completions?used=1", "X-API-Key", "k-1");
            HttpResponse<String> failed = app.get("/v1/completions?used=500&status=503", "X-API-Key", "k-1");
            HttpResponse<String> afterFailure = app.get("/v1/completions?used=1", "X-API-Key", "k-1");
            HttpResponse<String> used1500 = app.get("/v1/completions?used=1500", "X-API-Key", "k-1");
            HttpResponse<String> with498Left = app.get("/v1/completions?used=1", "X-API-Key", "k-1");
            List<Integer> loginStatuses = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                loginStatuses.add(app.send("POST", "/login").statusCode());
            }
            for (int i = 0; i < 6; i++) {
                loginStatuses.add(app.send("POST", "/login?status=401").statusCode());
            }

            // Each RateLimit field shows the bucket after the 1 000 taken up front, before the settlement
            assertThat(used8000.headers().firstValue("RateLimit")).hasValue("\"llm-tokens\";r=9000;t=6");
            assertThat(next.headers().firstValue("RateLimit")).hasValue("\"llm-tokens\";r=1000;t=54");
            assertThat(failed.statusCode()).as("served, and given back: 5xx").isEqualTo(503);
            assertThat(afterFailure.headers().firstValue("RateLimit")).hasValue("\"llm-tokens\";r=999;t=55");
            assertThat(used1500.headers().firstValue("RateLimit")).hasValue("\"llm-tokens\";r=998;t=55");
            assertThat(with498Left.statusCode())
                    .as("498 tokens left, less than the 1 000 taken up front")
                    .isEqualTo(429);
            assertThat(loginStatuses).containsExactly(200, 200, 200, 401, 401, 401, 401, 401, 429);
        }
    }

    @Test
    void requestsInFlight(@TempDir Path dir) throws Exception {
        InMemoryRateLimiter limiter = InMemoryRateLimiter.create();

        // --- http: requests in flight
        Rule exports = Rule.builder(ConcurrencyLimit.of("exports", 5)) // at most 5 exports of one customer at once
                .path("/reports/*/export")
                .key(ClientKey.header("X-Customer"))
                .build();
        Rule searches = Rule.builder(perIp) // 100 a minute, and at most 2 at once
                .path("/search")
                .inFlight(ConcurrencyLimit.of("searches", 2))
                .build();
        // ---

        String file = DocumentationExamples.blocks(PAGE, "yaml").get(2);
        RequestLimiterConfig fromFile =
                RequestLimiterConfig.load(Files.writeString(dir.resolve("in-flight.yaml"), file));
        assertThat(fromFile.rules()).containsExactly(exports, searches);
        try (JettyApp app = JettyApp.start(new TollgateFilter(fromFile.newRequestLimiter(limiter)))) {
            List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                running.add(app.getAsync("/reports/" + i + "/export?hold=exports", "X-Customer", "acme"));
            }
            app.awaitHeld("exports", 5);
            HttpResponse<String> sixth = app.get("/reports/6/export", "X-Customer", "acme");
            int otherCustomer =
                    app.get("/reports/7/export", "X-Customer", "globex").statusCode();
            app.release("exports");
            for (CompletableFuture<HttpResponse<String>> each : running) {
                assertThat(each.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            }

            assertThat(sixth.statusCode()).isEqualTo(429);
            assertThat(sixth.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(sixth.body()).contains("\"detail\":\"Too many requests in flight for exports; retry in 1 s.\"");
            assertThat(otherCustomer).isEqualTo(200);
        }
    }

    @Test
    void rulesFromAFile(@TempDir Path dir) throws Exception {
        List<String> files = DocumentationExamples.blocks(PAGE, "yaml");
        assertThat(files).hasSize(4);
        Path configFile = Files.writeString(dir.resolve("tollgate.yaml"), files.get(3));
        RateLimiter limiter = InMemoryRateLimiter.create();

        // --- http: config file
        RequestLimiter requests = RequestLimiterConfig.load(configFile) // a .yaml, .yml or .properties file
                .newRequestLimiter(limiter);
        // ---

        assertThat(requests.rules()).hasSize(2);
        assertThat(requests.rules().get(1).policy().limits()).hasSize(2);
        assertThat(requests.rules().get(1).onMissingKey()).isEqualTo(MissingKey.reject(401));
    }

    @Test
    void policiesPerRequestFollowThePlanTheListsAndTheOverrides(@TempDir Path dir) throws Exception {
        String file = DocumentationExamples.blocks(PAGE, "yaml").get(0);
        assertThat(file).contains("policy-from:");
        Path configFile = Files.writeString(dir.resolve("tiers.yaml"), file);
        InMemoryRateLimiter limiter = InMemoryRateLimiter.create();

        try (JettyApp app = JettyApp.startDeclared(
                Map.of("config", configFile.toString(), "limiter", "attribute:io.tollgate.RateLimiter"),
                context -> context.setAttribute("io.tollgate.RateLimiter", limiter))) {
            HttpResponse<String> free = app.get("/api/x", "X-API-Key", "k-1");
            HttpResponse<String> gold = app.get("/api/x", "X-API-Key", "k-2", "X-Plan", "gold");
            HttpResponse<String> ops = app.get("/api/x", "X-API-Key", "k-ops", "X-Plan", "gold");
            HttpResponse<String> monitor = app.get("/api/x", "X-API-Key", "k-monitor");
            HttpResponse<String> abuser = app.get("/api/x", "X-API-Key", "k-abuser");

            assertThat(free.headers().firstValue("RateLimit-Policy")).hasValue("\"free\";q=100;w=3600");
            assertThat(gold.headers().firstValue("RateLimit-Policy")).hasValue("\"gold\";q=10000;w=3600");
            assertThat(ops.headers().firstValue("RateLimit-Policy")).hasValue("\"internal\";q=100000;w=3600");
            assertThat(monitor.statusCode()).isEqualTo(200);
            assertThat(monitor.headers().firstValue("RateLimit-Policy")).isEmpty();
            assertThat(abuser.statusCode()).isEqualTo(403);
            assertThat(abuser.body()).contains("\"detail\":\"Requests from this client are refused.\"");
        }
    }

    @Test
    void theWebXmlFragmentDeclaresAWorkingFilter() throws Exception {
        String fragment = DocumentationExamples.blocks(PAGE, "xml").get(0);
        Document xml = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(new ByteArrayInputStream(
                        ("<web-app>" + fragment + "</web-app>").getBytes(StandardCharsets.UTF_8)));
        Element filter = (Element) xml.getElementsByTagName("filter").item(0);
        Map<String, String> initParameters = new HashMap<>();
        NodeList params = filter.getElementsByTagName("init-param");
        for (int i = 0; i < params.getLength(); i++) {
            Element param = (Element) params.item(i);
            initParameters.put(text(param, "param-name"), text(param, "param-value"));
        }
        InMemoryRateLimiter limiter = InMemoryRateLimiter.create();

        assertThat(text(filter, "filter-class")).isEqualTo(TollgateFilter.class.getName());
        try (JettyApp app = JettyApp.startDeclared(
                initParameters, context -> context.setAttribute("io.tollgate.RateLimiter", limiter))) {
            assertThat(app.get("/api/x").statusCode()).isEqualTo(401);
            assertThat(app.get("/api/x", "X-API-Key", "k").statusCode()).isEqualTo(200);
            assertThat(limiter.estimatedKeyCount()).isEqualTo(1);
        }
    }

    @Test
    void everyJavaExampleOfThisPageIsRunHere() {
        int examples = DocumentationExamples.assertRunBy(
                "tollgate-servlet/src/test/java/io/tollgate/servlet/HttpDocumentationExamplesTest.java", PAGE);

        assertThat(examples).isEqualTo(9);
    }

    /** Asserts that the response has the status line's status, each header line, and the body if shown. */
    private static void assertMatches(String exchange, HttpResponse<String> response) {
        String[] parts = exchange.split("\n\n", 2);
        String[] lines = parts[0].split("\n");
        assertThat(response.statusCode()).isEqualTo(Integer.parseInt(lines[0].split(" ")[1]));
        for (int i = 1; i < lines.length; i++) {
            String name = lines[i].substring(0, lines[i].indexOf(':'));
            String value = lines[i].substring(lines[i].indexOf(':') + 1).strip();
            assertThat(response.headers().allValues(name)).as(name).containsExactly(value);
        }
        if (parts.length > 1) {
            assertThat(response.body()).isEqualTo(parts[1].strip());
        }
    }

    private static String text(Element parent, String tag) {
        return parent.getElementsByTagName(tag).item(0).getTextContent().strip();
    }
}
