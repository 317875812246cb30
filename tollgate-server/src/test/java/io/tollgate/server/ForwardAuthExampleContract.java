package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.testing.FreePorts;
import io.tollgate.testing.RedisExtension;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a forward-auth example (examples/nginx, examples/caddy) promises, run as it is on free ports: two proxies
 * from Debian's packages in front of one upstream, each asking the two Tollgate servers of
 * examples/nginx/tollgate.yaml, which share one Redis. Each client IP may send 10 requests, then 1 a minute.
 */
@Timeout(120)
abstract class ForwardAuthExampleContract {

    /** The example's capacity per client IP (examples/nginx/tollgate.yaml). */
    static final int CAPACITY = 10;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final List<String> reached = new CopyOnWriteArrayList<>();
    private final List<Process> proxies = new ArrayList<>();
    private final int[] proxyPorts = new int[2];
    private final TollgateServer[] tollgates = new TollgateServer[2];
    private HttpServer upstream;

    @TempDir
    Path dir;

    /** The proxy's program, found on {@code PATH} (or the test is skipped or fails, as RequiredBinary says). */
    abstract Path binary();

    /** The example's directory under the project, such as {@code examples/nginx}. */
    abstract String example();

    /**
     * The command that runs proxy {@code index} (0 or 1) from the example's files, copied to {@code dir} on free
     * ports, and the environment it needs.
     */
    abstract ProcessBuilder proxy(Path binary, Path dir, int index, int port);

    /** The body the client gets with the refusal. */
    abstract String refusalBody(int retryAfter);

    @BeforeEach
    void start() throws Exception {
        Path binary = binary();
        redis.server().command("FLUSHALL");
        upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        upstream.setExecutor(Executors.newCachedThreadPool());
        upstream.createContext("/", exchange -> {
            try (exchange) {
                reached.add(exchange.getRequestURI().toString());
                byte[] body = "served".getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            }
        });
        upstream.start();
        // The servers start without their warm-up, so a first decision of this test JVM may run cold past the 50 ms
        // budget: a budget no stall reaches keeps the claim here one limit across proxies and servers (the cold start
        // of a jar within its budget is ColdEnvoyBurstIT's and ThreeServersExactnessIT's)
        String tollgateYaml = Files.readString(DocumentationExamples.PROJECT.resolve("examples/nginx/tollgate.yaml"))
                .replace("uri: redis://127.0.0.1:6379", "uri: " + redis.server().uri() + "\n  timeout: 5s");
        for (int i = 0; i < 2; i++) {
            tollgates[i] = TollgateServer.start(ServerConfig.parse(tollgateYaml, "tollgate.yaml")
                    .withPort(0)
                    .withWarmUp(false));
            proxyPorts[i] = FreePorts.nobodyListens();
        }
        try (var files = Files.list(DocumentationExamples.PROJECT.resolve(example()))) {
            for (Path file : files.toList()) {
                Files.writeString(dir.resolve(file.getFileName().toString()), onFreePorts(Files.readString(file)));
            }
        }
        for (int i = 0; i < 2; i++) {
            proxies.add(ProxyProcesses.start(
                    proxy(binary, dir, i, proxyPorts[i]), dir, dir.resolve("proxy-" + i + ".log"), proxyPorts[i]));
        }
    }

    /** The example's text with its addresses (8000, 8001, 8080, 8081, 9000 on 127.0.0.1) on this test's ports. */
    private String onFreePorts(String text) {
        return text.replace("127.0.0.1:8000", "127.0.0.1:" + proxyPorts[0])
                .replace("127.0.0.1:8001", "127.0.0.1:" + proxyPorts[1])
                .replace("127.0.0.1:8080", "127.0.0.1:" + tollgates[0].port())
                .replace("127.0.0.1:8081", "127.0.0.1:" + tollgates[1].port())
                .replace("127.0.0.1:9000", "127.0.0.1:" + upstream.getAddress().getPort());
    }

    @AfterEach
    void stop() throws Exception {
        for (Process proxy : proxies) {
            proxy.destroy();
            proxy.waitFor();
        }
        for (TollgateServer tollgate : tollgates) {
            if (tollgate != null) {
                tollgate.close();
            }
        }
        if (upstream != null) {
            upstream.stop(0);
        }
    }

    @Test
    void aClientGetsItsCapacityWithTheRateLimitFieldsThenA429ThatNeverReachesTheUpstream() throws Exception {
        List<HttpResponse<String>> allowed = new ArrayList<>();
        for (int i = 0; i < CAPACITY; i++) {
            // Every other one with a forged X-Forwarded-For: it must not make another client
            allowed.add(get(0, "/orders", i % 2 == 0 ? null : "203.0.113." + i));
        }
        HttpResponse<String> refused = get(0, "/orders", "198.51.100.1");

        assertThat(allowed).extracting(HttpResponse::statusCode).containsOnly(200);
        assertThat(allowed.get(0).body()).isEqualTo("served");
        assertThat(allowed.get(0).headers().firstValue("RateLimit-Policy")).hasValue("\"per-ip\";q=10;w=600");
        assertThat(allowed.get(0).headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=9;t=60");
        // Full again in 10 minutes, less the moment the requests took
        assertThat(allowed.get(CAPACITY - 1).headers().firstValue("RateLimit"))
                .hasValueSatisfying(field -> assertThat(field).matches("\"per-ip\";r=0;t=(599|600)"));
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(refused.headers().firstValue("RateLimit-Policy")).hasValue("\"per-ip\";q=10;w=600");
        assertThat(refused.headers().firstValue("RateLimit"))
                .hasValueSatisfying(field -> assertThat(field).matches("\"per-ip\";r=0;t=(599|600)"));
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(refused.body()).isEqualTo(refusalBody(60));
        assertThat(reached).as("what reached the upstream").hasSize(CAPACITY).containsOnly("/orders");
    }

    @Test
    void twoProxiesAndTwoServersOnOneRedisAdmitExactlyTheCapacityOfAConcurrentBurst() throws Exception {
        int burst = 64;
        ExecutorService threads = Executors.newFixedThreadPool(burst);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> statuses = new ArrayList<>();
            for (int i = 0; i < burst; i++) {
                int proxy = i % 2;
                statuses.add(threads.submit(() -> {
                    go.await();
                    return get(proxy, "/burst", null).statusCode();
                }));
            }
            go.countDown();
            List<Integer> answered = new ArrayList<>();
            for (Future<Integer> status : statuses) {
                answered.add(status.get());
            }

            assertThat(answered.stream().filter(s -> s == 200))
                    .as("admitted across both proxies")
                    .hasSize(CAPACITY);
            assertThat(answered.stream().filter(s -> s == 429)).hasSize(burst - CAPACITY);
            assertThat(reached).hasSize(CAPACITY);
            assertThat(decisions(0)).as("decisions of the first server").isPositive();
            assertThat(decisions(1)).as("decisions of the second server").isPositive();
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void withOneServerDownTheOtherDecidesForBothProxies() throws Exception {
        tollgates[0].close();
        tollgates[0] = null;

        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i <= CAPACITY; i++) {
            statuses.add(get(i % 2, "/orders", null).statusCode());
        }

        assertThat(statuses.subList(0, CAPACITY)).containsOnly(200);
        assertThat(statuses.get(CAPACITY)).isEqualTo(429);
        assertThat(reached).hasSize(CAPACITY);
    }

    @Test
    void withBothServersDownTheExampleFailsOpen() throws Exception {
        for (int i = 0; i < 2; i++) {
            tollgates[i].close();
            tollgates[i] = null;
        }

        HttpResponse<String> response = get(1, "/orders", null);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("served");
        assertThat(reached).containsExactly("/orders");
    }

    /** How many requests server {@code index} decided, read from its meters on its management port. */
    private long decisions(int index) throws IOException, InterruptedException {
        String scrape = client.send(
                        HttpRequest.newBuilder(tollgates[index].managementUri().resolve("/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        return Math.round(scrape.lines()
                .filter(line -> line.startsWith("tollgate_http_decisions_total{"))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .sum());
    }

    private HttpResponse<String> get(int proxy, String path, String forgedForwardedFor)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + proxyPorts[proxy] + path))
                .timeout(Duration.ofSeconds(10));
        if (forgedForwardedFor != null) {
            request.header("X-Forwarded-For", forgedForwardedFor);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
