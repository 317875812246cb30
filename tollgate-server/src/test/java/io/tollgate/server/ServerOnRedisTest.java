package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.testing.RedisCluster;
import io.tollgate.testing.RedisExtension;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Servers whose buckets live in a real Redis, which the tests kill and restart. */
@Timeout(120)
class ServerOnRedisTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static Upstream upstream;

    /**
     * The load's client during outages. Not java.net.http's: under this load its connection pool (JDK 17)
     * now and then hands out a connection whose pool watcher still reads it, which then closes it with the
     * answer unread ("HTTP/1.1 header parser received no bytes", caused by "connection closed locally").
     */
    private static final HttpClient checks = new HttpClient();

    private final List<RunningServer> servers = new ArrayList<>();

    @BeforeAll
    static void startUpstream() throws Exception {
        upstream = Upstream.start();
        checks.start();
    }

    @AfterAll
    static void stopUpstream() throws Exception {
        checks.stop();
        upstream.close();
    }

    @BeforeEach
    void emptyRedis() {
        redis.server().command("FLUSHALL");
    }

    @AfterEach
    void stopServers() {
        servers.forEach(RunningServer::close);
        redis.server().heal();
    }

    private RunningServer start(String onFailure) throws Exception {
        return start(onFailure, true);
    }

    private RunningServer start(String onFailure, boolean batching) throws Exception {
        RunningServer server =
                RunningServer.start("""
                redis:
                  uri: %s
                  timeout: 50ms
                  batching: %s
                  failure-policy: %s
                policies:
                  per-client:
                    limits:
                      - capacity: 5
                        refill: 1/h
                rules:
                  - path: /api/**
                    key: header:X-API-Key
                    policy: per-client
                server:
                  upstream: %s
                  decision-port: 0
                  management-port: 0
                """.formatted(redis.server().uri(), batching, onFailure, upstream.uri()));
        servers.add(server);
        return server;
    }

    @Test
    void theAdminApiInspectsAndResetsABucketInRedisForEveryServer() throws Exception {
        String config = """
                redis:
                  uri: %s
                  timeout: 50ms
                policies:
                  per-client:
                    limits:
                      - capacity: 5
                        refill: 1/h
                server:
                  management-port: 0
                """.formatted(redis.server().uri());
        RunningServer one = RunningServer.start(config);
        servers.add(one);
        RunningServer other = RunningServer.start(config);
        servers.add(other);
        for (int i = 0; i < 5; i++) {
            other.decision("/v1/check", "{\"policy\": \"per-client\", \"key\": \"dave\"}");
        }

        HttpResponse<String> empty = one.management("GET", "/admin/buckets/per-client/api:dave");
        HttpResponse<String> reset = one.management("DELETE", "/admin/buckets/per-client/api:dave");
        // The other server learnt from its fifth admission that dave is empty, and refused him from its deny cache
        // until it confirmed the reset, which the reset waited for
        HttpResponse<String> elsewhere = other.decision("/v1/check", "{\"policy\": \"per-client\", \"key\": \"dave\"}");
        redis.server().kill();
        HttpResponse<String> down = one.management("GET", "/admin/buckets/per-client/api:dave");

        assertThat(empty.body())
                .startsWith("{\"policy\":\"per-client\",\"key\":\"api:dave\",\"stored\":true,\"remaining\":0,");
        assertThat(reset.statusCode()).isEqualTo(204);
        assertThat(elsewhere.statusCode()).isEqualTo(200);
        assertThat(elsewhere.body()).contains("\"remaining\":4");
        assertThat(down.statusCode()).isEqualTo(503);
        assertThat(down.body()).contains("\"detail\":\"The store cannot answer: ");
    }

    @Test
    void aResetOnOneServerAnswersOnceEachOtherServerForgotTheRefusalItCached() throws Exception {
        resetReachesEveryServer("uri: " + redis.server().uri());
    }

    @Test
    void aResetOnOneServerReachesEveryOtherServerOnARedisClusterOfThreeMasters() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3)) {
            resetReachesEveryServer("cluster-uris: [" + String.join(", ", cluster.uris()) + "]");
        }
    }

    /**
     * Three servers on one store, a key refused on each (so that each caches the refusal), reset through one's
     * admin API: it answers 204, every other server having confirmed, and the next request on each is admitted.
     */
    private void resetReachesEveryServer(String target) throws Exception {
        String config = """
                redis:
                  %s
                  timeout: 500ms
                policies:
                  per-client:
                    limits:
                      - capacity: 5
                        refill: 1/h
                server:
                  management-port: 0
                """.formatted(target);
        List<RunningServer> three = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RunningServer server = RunningServer.start(config);
            servers.add(server);
            three.add(server);
        }
        String check = "{\"policy\": \"per-client\", \"key\": \"erin\"}";
        for (int i = 0; i < 5; i++) {
            assertThat(three.get(0).decision("/v1/check", check).statusCode()).isEqualTo(200);
        }
        for (RunningServer server : three) {
            assertThat(server.decision("/v1/check", check).statusCode()).isEqualTo(429);
            assertThat(server.decision("/v1/check", check).body())
                    .as("refused again, from the deny cache")
                    .contains("\"remaining\":0");
        }

        HttpResponse<String> reset = three.get(1).management("DELETE", "/admin/buckets/per-client/api:erin");

        assertThat(reset.statusCode()).isEqualTo(204);
        for (RunningServer other : List.of(three.get(0), three.get(2))) {
            assertThat(other.decision("/v1/check", check).statusCode())
                    .as("the very next request on another server")
                    .isEqualTo(200);
        }
    }

    @Test
    void aResetNamesALiveInstanceThatDidNotConfirmItWith202() throws Exception {
        String config = """
                redis:
                  uri: %s
                policies:
                  per-client:
                    limits:
                      - capacity: 5
                        refill: 1/h
                server:
                  management-port: 0
                """.formatted(redis.server().uri());
        RunningServer one = RunningServer.start(config);
        servers.add(one);
        // an instance that stopped without withdrawing: counted live for a while more, hearing nothing
        long until = System.currentTimeMillis() * 1_000 + TimeUnit.MINUTES.toMicros(1);
        redis.server().command("ZADD", "tollgate:instances/live", Long.toString(until), "gone/42/0badf00d");

        HttpResponse<String> reset = one.management("DELETE", "/admin/buckets/per-client/api:frank");

        assertThat(reset.statusCode()).isEqualTo(202);
        assertThat(reset.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(reset.body())
                .startsWith("{\"detail\":\"The buckets were reset in the store, but 1 of the other live instances did"
                        + " not confirm in time")
                .endsWith("\"confirmed_instances\":[],\"unconfirmed_instances\":[\"gone/42/0badf00d\"]}");
    }

    @Test
    void aStoppedServerLeavesNoConnectionToRedisBehind() throws Exception {
        long before = clients();
        RunningServer server = start("local");
        long running = clients();

        server.close();
        servers.remove(server);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        long after = clients();
        while (after > before && System.nanoTime() < deadline) {
            Thread.sleep(20);
            after = clients();
        }

        assertThat(running).as("connections while it runs").isGreaterThan(before);
        // Its top keys decorate the store's limiter: closing the decorator closed nothing, and the connections
        // stayed, reconnecting for ever once Redis went away
        assertThat(after).as("connections once it stopped").isEqualTo(before);
    }

    /** How many clients Redis has connected, this test's own included. */
    private static long clients() {
        return String.valueOf(redis.server().command("CLIENT", "LIST")).lines().count();
    }

    @Test
    void theTwoServerExampleSharesItsLimitsPlansAndResetsAsItsCommentsSay() throws Exception {
        String file = Files.readString(DocumentationExamples.PROJECT.resolve("examples/two-servers/tollgate.yaml"))
                .replace("redis://127.0.0.1:6379", redis.server().uri())
                .replace("http://127.0.0.1:9000", upstream.uri().toString());
        RunningServer one = RunningServer.start(file);
        servers.add(one);
        RunningServer other = RunningServer.start(file);
        servers.add(other);

        List<Integer> free = new ArrayList<>();
        for (int i = 0; i < 11; i++) {
            free.add((i % 2 == 0 ? one : other)
                    .get("/api/hello", "X-API-Key", "k-free")
                    .statusCode());
        }
        List<Integer> pro = new ArrayList<>();
        for (int i = 0; i < 11; i++) {
            pro.add((i % 2 == 0 ? one : other)
                    .get("/api/hello", "X-API-Key", "k-acme")
                    .statusCode());
        }
        int withoutKey = one.get("/api/hello").statusCode();
        HttpResponse<String> withoutToken = other.management("DELETE", "/admin/buckets/free/header:x-api-key:k-free");
        HttpResponse<String> reset = other.management(
                "DELETE", "/admin/buckets/free/header:x-api-key:k-free", "Authorization", "Bearer change-me");

        assertThat(free)
                .as("ten between both servers, then refused")
                .containsExactly(200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429);
        assertThat(pro).as("the pro plan's burst of 100").containsOnly(200);
        assertThat(withoutKey).isEqualTo(401);
        assertThat(withoutToken.statusCode()).isEqualTo(401);
        assertThat(reset.statusCode()).isEqualTo(204);
        assertThat(one.get("/api/hello", "X-API-Key", "k-free").statusCode())
                .as("the reset on one server answered once the other confirmed it")
                .isEqualTo(200);
    }

    @Test
    void twoServersOnOneRedisShareOneLimit() throws Exception {
        List<RunningServer> pair = List.of(start("local"), start("local"));

        List<Integer> proxied = new ArrayList<>();
        List<Integer> checked = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            RunningServer server = pair.get(i % 2);
            proxied.add(server.get("/api/orders", "X-API-Key", "alice").statusCode());
            checked.add(server.decision("/v1/check", "{\"policy\": \"per-client\", \"key\": \"bob\"}")
                    .statusCode());
        }

        assertThat(proxied).containsExactly(200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429);
        assertThat(checked).containsExactly(200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429);
    }

    @Test
    void twoServersOnOneRedisShareACalendarQuotaThatRefusesUntilMidnight() throws Exception {
        String config = """
                redis:
                  uri: %s
                policies:
                  daily:
                    limits:
                      - capacity: 100
                        refill: 100/s
                    quotas:
                      - count: 3
                        period: day
                        zone: UTC
                rules:
                  - path: /api/**
                    key: header:X-API-Key
                    policy: daily
                server:
                  upstream: %s
                """.formatted(redis.server().uri(), upstream.uri());
        List<RunningServer> pair = List.of(RunningServer.start(config), RunningServer.start(config));
        servers.addAll(pair);
        assumeTrue(
                LocalTime.now(ZoneOffset.UTC).isBefore(LocalTime.of(23, 59)),
                "four requests a minute before midnight could fall on two days");

        List<HttpResponse<String>> answers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            answers.add(pair.get(i % 2).get("/api/orders", "X-API-Key", "erin"));
        }
        long untilMidnight = Duration.between(
                        Instant.now(), LocalDate.now(ZoneOffset.UTC).plusDays(1).atStartOfDay(ZoneOffset.UTC))
                .toSeconds();

        assertThat(answers).extracting(HttpResponse::statusCode).containsExactly(200, 200, 200, 429);
        assertThat(answers.get(0).headers().firstValue("RateLimit-Policy"))
                .hasValue("\"daily.0\";q=100;w=1, \"daily.1\";q=3;w=86400");
        assertThat(answers.get(2).headers().firstValue("RateLimit"))
                .hasValueSatisfying(field -> assertThat(field).startsWith("\"daily.1\";r=0;t="));
        assertThat(Long.parseLong(
                        answers.get(3).headers().firstValue("Retry-After").orElseThrow()))
                .isBetween(untilMidnight - 2, untilMidnight + 2);
    }

    @ParameterizedTest(name = "batching: {0}")
    @ValueSource(booleans = {true, false})
    void twoServersUnderConcurrentChecksAdmitExactlyTheCapacity(boolean batching) throws Exception {
        List<RunningServer> pair = List.of(start("deny", batching), start("deny", batching));
        ExecutorService clients = Executors.newFixedThreadPool(16);
        try {
            List<Future<Integer>> statuses = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                RunningServer server = pair.get(i % 2);
                statuses.add(clients.submit(
                        () -> server.decision("/v1/check", "{\"policy\": \"per-client\", \"key\": \"carol\"}")
                                .statusCode()));
            }
            List<Integer> answered = new ArrayList<>();
            for (Future<Integer> status : statuses) {
                answered.add(status.get());
            }

            assertThat(answered).containsOnly(200, 429);
            assertThat(answered.stream().filter(status -> status == 200)).hasSize(5);
        } finally {
            clients.shutdownNow();
        }
    }

    @Test
    void theMetricsOfTheStoreStillReadAfterGarbageCollection() throws Exception {
        RunningServer server = start("local");
        server.decision("/v1/check", "{\"policy\": \"per-client\", \"key\": \"dora\"}");

        for (int i = 0; i < 3; i++) {
            System.gc();
            TimeUnit.MILLISECONDS.sleep(50);
        }
        String metrics = server.management("GET", "/metrics").body();

        String node = "node=\"127.0.0.1:" + redis.server().port() + "\"";
        assertThat(metrics)
                .contains("tollgate_circuit_state{" + node + ",state=\"closed\"} 1.0")
                .contains("tollgate_circuit_state{" + node + ",state=\"open\"} 0.0")
                .contains("tollgate_circuit_state{" + node + ",state=\"half_open\"} 0.0")
                .contains("tollgate_redis_latency_seconds_bucket{le=\"0.001\"}")
                .doesNotContain("NaN")
                .containsPattern(
                        "tollgate_decisions_total\\{outcome=\"allowed\",policy=\"per-client\",source=\"redis\"} 1.0");
    }

    @Test
    void failingOpenAllowsEveryCheckWhileRedisIsDownAndReadyzSaysSo() throws Exception {
        RunningServer server = start("allow");

        Outage outage = outage(server);

        assertThat(outage.readyBefore.statusCode()).isEqualTo(200);
        assertThat(outage.readyDuring.statusCode()).isEqualTo(503);
        assertThat(outage.readyDuring.body()).contains("The store is unavailable: Redis");
        assertThat(outage.readyAfter.statusCode()).isEqualTo(200);
        assertThat(server.management("GET", "/metrics").body())
                .containsPattern("tollgate_redis_failures_total\\{cause=\"(unreachable|circuit_open)\"} [1-9]")
                .containsPattern(
                        "tollgate_api_decisions_total\\{degraded=\"true\",outcome=\"allowed\",policy=\"per-client\"} [1-9]");
        assertThat(outage.during).isNotEmpty().allSatisfy(response -> {
            assertThat(response.getStatus()).isEqualTo(200);
            assertThat(response.getContentAsString())
                    .contains("\"allowed\":true")
                    .contains("\"degraded\":true");
        });
        assertThat(outage.failures).isEmpty();
    }

    @Test
    void failingClosedRefusesEveryCheckWhileRedisIsDownAsUnavailableNotAsOverTheLimit() throws Exception {
        RunningServer server = start("deny");

        Outage outage = outage(server);

        assertThat(outage.during).isNotEmpty().allSatisfy(response -> {
            assertThat(response.getStatus()).isEqualTo(503);
            assertThat(response.getHeaders().get("Retry-After")).isEqualTo("1");
            assertThat(response.getHeaders().get("Content-Type")).isEqualTo("application/problem+json");
            assertThat(response.getContentAsString())
                    .contains("\"type\":\"urn:tollgate:limiter-unavailable\"")
                    .contains("\"status\":503")
                    .contains("\"allowed\":false")
                    .contains("\"degraded\":true");
        });
        assertThat(outage.failures).isEmpty();
    }

    @Test
    void decidingLocallyKeepsEachClientInsideItsLimitWhileRedisIsDown() throws Exception {
        RunningServer server = start("local");

        Outage outage = outage(server);

        long allowed = outage.during.stream().filter(r -> r.getStatus() == 200).count();
        assertThat(outage.during)
                .allSatisfy(
                        response -> assertThat(response.getContentAsString()).contains("\"degraded\":true"));
        assertThat(allowed)
                .as("one key, capacity 5, decided by this server alone")
                .isLessThanOrEqualTo(5);
        assertThat(outage.during.size()).isGreaterThan(5);
        assertThat(outage.failures).isEmpty();
    }

    /** What the server answered before, while and after Redis was down, under a load of checks. */
    private record Outage(
            HttpResponse<String> readyBefore,
            HttpResponse<String> readyDuring,
            HttpResponse<String> readyAfter,
            List<ContentResponse> during,
            List<Throwable> failures) {}

    private Outage outage(RunningServer server) throws Exception {
        HttpResponse<String> readyBefore = server.management("GET", "/readyz");
        ConcurrentLinkedQueue<ContentResponse> during = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean down = new AtomicBoolean();
        AtomicBoolean running = new AtomicBoolean(true);
        ExecutorService load = Executors.newFixedThreadPool(4);
        List<Future<?>> clients = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            clients.add(load.submit(() -> {
                while (running.get()) {
                    try {
                        boolean wasDown = down.get();
                        // a key of its own for the outage: one that Redis refused before would be refused
                        // from the deny cache, rightly, without a degraded decision
                        String key = wasDown ? "during" : "before";
                        ContentResponse response = checks.POST(
                                        server.server().decisionUri().resolve("/v1/check"))
                                .body(new StringRequestContent(
                                        "application/json", "{\"policy\": \"per-client\", \"key\": \"" + key + "\"}"))
                                .timeout(20, TimeUnit.SECONDS)
                                .send();
                        if (wasDown && down.get()) {
                            during.add(response);
                        }
                    } catch (Exception e) {
                        failures.add(e);
                    }
                }
            }));
        }
        TimeUnit.MILLISECONDS.sleep(300);
        redis.server().kill();
        down.set(true);
        TimeUnit.MILLISECONDS.sleep(1_000);
        HttpResponse<String> readyDuring = server.management("GET", "/readyz");
        down.set(false);
        redis.server().restart();
        HttpResponse<String> readyAfter = awaitReady(server);
        running.set(false);
        for (Future<?> client : clients) {
            client.get(30, TimeUnit.SECONDS);
        }
        load.shutdown();
        return new Outage(readyBefore, readyDuring, readyAfter, List.copyOf(during), List.copyOf(failures));
    }

    private static HttpResponse<String> awaitReady(RunningServer server) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            HttpResponse<String> ready = server.management("GET", "/readyz");
            if (ready.statusCode() == 200 || System.nanoTime() > deadline) {
                return ready;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }
}
