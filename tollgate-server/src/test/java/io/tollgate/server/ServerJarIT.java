package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tollgate.fixtures.MapBucketStore;
import io.tollgate.redis.internal.TokenBucketScript;
import io.tollgate.server.internal.envoy.proto.RateLimitRequest;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.Code;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import io.tollgate.spi.StoreProvider;
import io.tollgate.testing.FreePorts;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.RequiredBinary;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The built jar, run as a user runs it: {@code java -jar tollgate-server.jar --config FILE --port 0}. */
@Order(1) // first: what it claims holds beside the tests of other modules
@Timeout(180)
class ServerJarIT {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static Upstream upstream;
    /** A file whose decision API admits two checks of a key, then refuses: what {@link #threeChecksOfAlice} asks. */
    private static final String TWO_CHECKS_AN_HOUR = """
            server:
              warm-up: false
            policies:
              per-client:
                limits:
                  - capacity: 2
                    refill: 1/h
            """;

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @TempDir
    Path dir;

    @BeforeAll
    static void startUpstream() throws Exception {
        upstream = Upstream.start();
    }

    @AfterAll
    static void stopUpstream() {
        upstream.close();
    }

    /**
     * The file of most tests, on {@code store} (empty: in memory). In memory, where a cold first decision has no
     * budget to outlast, the jar starts without its warm-up ({@code server.warm-up: false}): seconds sooner.
     */
    private Path config(String store) throws Exception {
        return config(store, !store.isEmpty());
    }

    /**
     * The file of most tests, on {@code store}, with or without the warm-up. A test on Redis whose claim is not the
     * first decisions' time starts cold with a budget that a cold first decision keeps within ({@code timeout:
     * 5s}): a warm-up takes seconds of a cold jar on two cores.
     */
    private Path config(String store, boolean warmUp) throws Exception {
        return Files.writeString(dir.resolve("tollgate.yaml"), """
                %s
                policies:
                  per-client:
                    limits:
                      - capacity: 3
                        refill: 1/h
                rules:
                  - path: /api/**
                    key: header:X-API-Key
                    policy: per-client
                server:
                  upstream: %s
                  decision-port: 0
                  management-port: 0
                  warm-up: %s
                """.formatted(store, upstream.uri(), warmUp));
    }

    @Test
    void theJarServesTheProxyTheDecisionPortAndTheManagementPortEachApart() throws Exception {
        Path config = Files.writeString(dir.resolve("ports.yaml"), """
                server:
                  upstream: %s
                  decision-port: 0
                  management-port: 0
                  warm-up: false
                policies:
                  per-client:
                    limits:
                      - capacity: 3
                        refill: 1/h
                rules:
                  - path: /api/**
                    key: header:X-API-Key
                    policy: per-client
                """.formatted(upstream.uri()));
        try (ServerProcess server = ServerProcess.start(config)) {
            int port = server.awaitPort();

            assertThat(server.out()).hasSize(3);
            Matcher management = Pattern.compile("tollgate management on http://127\\.0\\.0\\.1:(\\d+)")
                    .matcher(server.out().get(0));
            Matcher decision = Pattern.compile("tollgate decision api on http://127\\.0\\.0\\.1:(\\d+)")
                    .matcher(server.out().get(1));
            assertThat(management.matches()).as(server.out().get(0)).isTrue();
            assertThat(decision.matches()).as(server.out().get(1)).isTrue();
            assertThat(server.out().get(2)).isEqualTo("tollgate listening on http://0.0.0.0:" + port);
            assertThat(server.err())
                    .as("server.warm-up: false")
                    .contains("tollgate skipped its warm-up (server.warm-up: false)")
                    .doesNotContain("tollgate warmed up");
            int managementPort = Integer.parseInt(management.group(1));
            int decisionPort = Integer.parseInt(decision.group(1));
            List<Integer> checks = new ArrayList<>();
            List<Integer> proxied = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                checks.add(post(decisionPort, "/v1/check", "{\"policy\": \"per-client\", \"key\": \"alice\"}")
                        .statusCode());
                proxied.add(get(port, "/api/x", "X-API-Key", "alice").statusCode());
            }
            assertThat(checks).containsExactly(200, 200, 200, 429);
            assertThat(proxied).containsExactly(200, 200, 200, 429);
            assertThat(get(managementPort, "/readyz").statusCode()).isEqualTo(200);
            assertThat(get(managementPort, "/metrics").body()).contains("tollgate_api_decisions_total");
            for (String path : List.of("/metrics", "/healthz")) {
                assertThat(get(port, path).headers().firstValue("X-Upstream-Path"))
                        .as("the public port proxies %s", path)
                        .hasValue(path);
            }
            assertThat(post(port, "/v1/check", "{\"policy\": \"per-client\", \"key\": \"bob\"}")
                            .headers()
                            .firstValue("X-Upstream-Path"))
                    .hasValue("/v1/check");
        }
    }

    @Test
    void whatTheFileExposesOnThePublicPortAnswersThereAndTheStartWarnsOfIt() throws Exception {
        Path config = Files.writeString(dir.resolve("exposed.yaml"), """
                server:
                  upstream: %s
                  expose-metrics-publicly: true
                  warm-up: false
                policies:
                  per-client:
                    limits:
                      - capacity: 3
                        refill: 1/h
                """.formatted(upstream.uri()));
        try (ServerProcess server = ServerProcess.start(config)) {
            int port = server.awaitPort();

            assertThat(server.out()).containsExactly("tollgate listening on http://0.0.0.0:" + port);
            assertThat(get(port, "/metrics").body()).contains("# HELP tollgate_");
            assertThat(get(port, "/healthz").headers().firstValue("X-Upstream-Path"))
                    .hasValue("/healthz");
            assertThat(server.err())
                    .contains("server.expose-metrics-publicly is on: every client that reaches the public port may"
                            + " read the meters")
                    .contains("WARNING: the public port also serves what server.expose-metrics-publicly expose");
        }
    }

    @Test
    void envoysRateLimitServiceIsPrintedBeforeTheListeningLineAndAnswersOverGrpc() throws Exception {
        Files.writeString(dir.resolve("ratelimit.yaml"), """
                domain: edge
                descriptors:
                  - key: remote_address
                    rate_limit:
                      unit: hour
                      requests_per_unit: 1
                """);
        Path config = Files.writeString(dir.resolve("envoy.yaml"), """
                envoy:
                  port: 0
                  host: 127.0.0.1
                  config: %s
                server:
                  warm-up: false
                """.formatted(dir.resolve("ratelimit.yaml")));
        try (ServerProcess server = ServerProcess.start(config)) {
            int port = server.awaitPort();

            assertThat(server.out()).hasSize(2);
            Matcher envoy = Pattern.compile("tollgate envoy rls listening on 127\\.0\\.0\\.1:(\\d+)")
                    .matcher(server.out().get(0));
            assertThat(envoy.matches()).as(server.out().get(0)).isTrue();
            assertThat(server.out().get(1)).isEqualTo("tollgate listening on http://127.0.0.1:" + port);
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", Integer.parseInt(envoy.group(1)))
                    .usePlaintext()
                    .build();
            try {
                RateLimitServiceGrpc.RateLimitServiceBlockingStub rls =
                        RateLimitServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
                RateLimitRequest request = EnvoyRateLimitServiceTest.request(
                        "edge", EnvoyRateLimitServiceTest.descriptor("remote_address", "10.0.0.1"));

                assertThat(rls.shouldRateLimit(request).getOverallCode()).isEqualTo(Code.OK);
                assertThat(rls.shouldRateLimit(request).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    void aStoreOfOnesOwnOnTheClassPathIsChosenByItsSectionAsMemoryAndRedisAre() throws Exception {
        // A store written only in tests (core's map store under the guard), named in a services file of its own
        Path services = dir.resolve("map-store");
        Files.createDirectories(services.resolve("META-INF/services"));
        Files.writeString(
                services.resolve("META-INF/services/" + StoreProvider.class.getName()),
                MapStoreProvider.class.getName() + "\n");
        List<Path> classPath = List.of(codeOf(MapStoreProvider.class), codeOf(MapBucketStore.class));
        Path config = Files.writeString(dir.resolve("map.yaml"), "map: {}\n" + TWO_CHECKS_AN_HOUR);

        // Without its services file, and beside a broken one (a provider whose class is missing): an unknown setting
        Path broken = dir.resolve("broken-store");
        Files.createDirectories(broken.resolve("META-INF/services"));
        Files.writeString(
                broken.resolve("META-INF/services/" + StoreProvider.class.getName()), "com.example.MissingStore\n");
        List<Path> withBroken = new ArrayList<>(classPath);
        withBroken.add(broken);
        ServerProcess without = ServerProcess.runWith(withBroken, "--config", config.toString(), "--port", "0");
        assertThat(without.awaitExit()).isEqualTo(2);
        assertThat(without.err())
                .contains("unknown setting 'map'")
                .contains("a store provider could not be loaded, and is left out")
                .contains("com.example.MissingStore");

        List<Path> withServices = new ArrayList<>(classPath);
        withServices.add(services);
        try (ServerProcess server = ServerProcess.runWith(withServices, "--config", config.toString(), "--port", "0")) {
            int port = server.awaitPort();

            assertThat(threeChecksOfAlice(port)).containsExactly(200, 200, 429);
            assertThat(server.err()).contains("store a map in this process");
        }
    }

    @Test
    void theServersModuleRunsOnTheModulePath() throws Exception {
        // The plain jar (its descriptor) and its dependencies as the build resolved them, each a module
        List<Path> modulePath = new ArrayList<>();
        try (Stream<Path> built = Files.list(Path.of("target"))) {
            built.filter(file -> file.getFileName().toString().startsWith("tollgate-server-"))
                    .filter(file -> !file.getFileName().toString().matches(".*-(sources|javadoc|tests)\\.jar"))
                    .filter(file -> file.getFileName().toString().endsWith(".jar"))
                    .forEach(modulePath::add);
        }
        assertThat(modulePath).as("the server's plain jar").hasSize(1);
        ModuleDescriptor descriptor = ModuleFinder.of(modulePath.get(0))
                .find("io.tollgate.server")
                .orElseThrow()
                .descriptor();
        assertThat(descriptor.isAutomatic())
                .as("a module of its own, not an automatic one")
                .isFalse();
        assertThat(descriptor.exports())
                .as("what other modules may use: the API, not the internal packages")
                .extracting(ModuleDescriptor.Exports::source)
                .containsExactly("io.tollgate.server");
        for (String entry : Files.readString(Path.of("target", "runtime-module-path.txt"))
                .strip()
                .split(java.io.File.pathSeparator)) {
            modulePath.add(Path.of(entry));
        }
        Path config = Files.writeString(dir.resolve("module-path.yaml"), TWO_CHECKS_AN_HOUR);

        try (ServerProcess server =
                ServerProcess.onModulePath(modulePath, "--config", config.toString(), "--port", "0")) {
            int port = server.awaitPort();

            assertThat(threeChecksOfAlice(port)).containsExactly(200, 200, 429);
        }
    }

    /** Asks the decision API three times for one key of the policy {@code per-client}; returns the statuses. */
    private List<Integer> threeChecksOfAlice(int port) throws Exception {
        String alice = "{\"policy\": \"per-client\", \"key\": \"alice\"}";
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            statuses.add(post(port, "/v1/check", alice).statusCode());
        }
        return statuses;
    }

    private static Path codeOf(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    @Test
    void aHangUpReloadsTheConfigurationAndTheServerRunsOn() throws Exception {
        String file = """
                policies:
                  per-client:
                    limits:
                      - capacity: %d
                        refill: 1/h
                """;
        Path config = Files.writeString(dir.resolve("reload.yaml"), file.formatted(1));
        assumeFalse(
                ServerProcess.hangUpsIgnoredHere(),
                "this JVM was started with SIGHUP ignored (nohup): the server it starts inherits that");
        try (ServerProcess server = ServerProcess.start(config)) {
            int port = server.awaitPort();
            String alice = "{\"policy\": \"per-client\", \"key\": \"alice\"}";
            List<Integer> before = List.of(
                    post(port, "/v1/check", alice).statusCode(),
                    post(port, "/v1/check", alice).statusCode());

            Files.writeString(config, file.formatted(3));
            server.signal("HUP");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!server.err().contains("(SIGHUP)") && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }

            assertThat(before).containsExactly(200, 429);
            assertThat(server.err()).contains("tollgate: reloaded " + config + ": 1 policy, 0 rules (SIGHUP)");
            assertThat(server.isAlive()).isTrue();
            assertThat(post(port, "/v1/check", alice).statusCode())
                    .as("the bigger bucket keeps alice's one spent token")
                    .isEqualTo(200);
            assertThat(post(port, "/v1/check", alice).statusCode()).isEqualTo(200);
            assertThat(post(port, "/v1/check", alice).statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aServerStartedWithHangUpsIgnoredSaysSoAndStillReloadsWhenTheFileChanges() throws Exception {
        String file = """
                policies:
                  per-client:
                    limits:
                      - capacity: %d
                        refill: 1/h
                """;
        Path config = Files.writeString(dir.resolve("nohup.yaml"), file.formatted(1));
        try (ServerProcess server = ServerProcess.startIgnoringHangUps(config)) {
            Files.writeString(config, file.formatted(3));
            Files.setLastModifiedTime(config, FileTime.from(Instant.now().plusSeconds(5)));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!server.err().contains("(the file changed)") && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }

            assertThat(server.err())
                    .contains("tollgate: SIGHUP is ignored in this process (started under nohup?), so a hang-up does"
                            + " not reload; reload through the file or the admin API")
                    .contains("tollgate: reloaded " + config + ": 1 policy, 0 rules (the file changed)");
            assertThat(server.isAlive()).isTrue();
        }
    }

    @Test
    void bodiesFarLargerThanTheHeapAreStreamedThroughIt() throws Exception {
        long size = 256L * 1024 * 1024;
        Path file = config("");
        Files.writeString(file, Files.readString(file) + "  max-body-size: 1GiB\n"); // past the default of 16MiB
        try (ServerProcess server = ServerProcess.start(file, "-Xmx48m")) {
            int port = server.awaitPort();
            MessageDigest sent = MessageDigest.getInstance("SHA-256");

            HttpResponse<String> upload = client.send(
                    request(port, "/files/upload")
                            .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ProxyTest.RandomBytes(size, sent)))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            HttpResponse<InputStream> download =
                    client.send(request(port, "/bytes/" + size).build(), HttpResponse.BodyHandlers.ofInputStream());
            long downloaded;
            try (InputStream in = download.body()) {
                downloaded = in.transferTo(OutputStream.nullOutputStream());
            }

            assertThat(upload.statusCode()).isEqualTo(200);
            assertThat(upload.headers().firstValue("X-Body-Bytes")).hasValue(Long.toString(size));
            assertThat(upload.headers().firstValue("X-Body-Sha256"))
                    .hasValue(HexFormat.of().formatHex(sent.digest()));
            assertThat(downloaded).isEqualTo(size);
            assertThat(server.err()).doesNotContain("OutOfMemoryError");
        }
    }

    @Test
    void sigtermLetsARequestInFlightFinishThenStops() throws Exception {
        try (ServerProcess server = ServerProcess.start(config(""))) {
            int port = server.awaitPort();
            CompletableFuture<HttpResponse<String>> inFlight =
                    client.sendAsync(request(port, "/slow").build(), HttpResponse.BodyHandlers.ofString());
            awaitUpstreamSaw("/slow");

            server.terminate();
            TimeUnit.MILLISECONDS.sleep(500);
            upstream.release();
            HttpResponse<String> finished = inFlight.get(20, TimeUnit.SECONDS);
            int status = server.awaitExit();

            assertThat(finished.statusCode()).isEqualTo(200);
            assertThat(status).as("the JVM's status after SIGTERM").isIn(0, 143);
            assertThat(server.err()).contains("tollgate stopped").doesNotContain("did not stop cleanly");
        }
    }

    @Test
    void theLogSaysWhenRedisAnswersAgainAndHowManyDecisionsTheFailurePolicyMadeMeanwhile() throws Exception {
        Path config = config("redis: {uri: " + redis.server().uri() + ", failure-policy: allow, timeout: 5s}", false);
        try (ServerProcess server = ServerProcess.start(config)) {
            int decisions = server.decisionPort();
            int management = server.managementPort();
            redis.server().kill();
            // The outage's count starts at Redis's last answer: wait until the server has seen it gone, so that
            // no ping still on its way when Redis was killed comes back as an answer after the checks below
            long noticed = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (get(management, "/readyz").statusCode() != 503 && System.nanoTime() < noticed) {
                TimeUnit.MILLISECONDS.sleep(50);
            }
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                statuses.add(post(decisions, "/v1/check", "{\"policy\": \"per-client\", \"key\": \"k" + i + "\"}")
                        .statusCode());
            }
            int readyDuring = get(management, "/readyz").statusCode();
            redis.server().restart();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!server.err().contains("answers again") && System.nanoTime() < deadline) {
                get(management, "/readyz");
                TimeUnit.MILLISECONDS.sleep(100);
            }

            assertThat(statuses).as("failure-policy: allow").containsOnly(200);
            assertThat(readyDuring).isEqualTo(503);
            assertThat(server.err())
                    .containsPattern("store redis at \\S+ is unavailable: .*; deciding by the failure policy until it"
                            + " answers")
                    .containsPattern("store redis at \\S+ answers again after \\d+\\.\\d s; the failure policy made 20"
                            + " decisions meanwhile");
        }
    }

    @Test
    void aStallOfTheServerItselfIsNotRedisBeingLate() throws Exception {
        Path config = config("redis: {uri: " + redis.server().uri() + ", timeout: 500ms}");
        try (ServerProcess server = ServerProcess.start(config)) {
            int port = server.decisionPort();
            post(port, "/v1/check", "{\"policy\": \"per-client\", \"key\": \"first\"}");

            // Redis holds the decision until the server has stopped running; its answer then waits in the
            // server's socket while the budget passes, as it does when a busy machine does not run the server
            redis.server().pause();
            CompletableFuture<HttpResponse<String>> check = client.sendAsync(
                    request(port, "/v1/check")
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(
                                    "{\"policy\": \"per-client\", \"key\": \"stalled\"}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            TimeUnit.MILLISECONDS.sleep(150);
            server.signal("STOP");
            redis.server().resume();
            TimeUnit.MILLISECONDS.sleep(800);
            server.signal("CONT");
            HttpResponse<String> answer = check.get(30, TimeUnit.SECONDS);

            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(answer.body())
                    .as("Redis's answer, read once the server ran again, not the failure policy's")
                    .contains("\"allowed\":true", "\"degraded\":false");
        } finally {
            redis.server().heal();
        }
    }

    @Test
    void twoJarsOnOneRedisShareOneLimitAndReadyzFollowsRedis() throws Exception {
        Path config = config("redis: {uri: " + redis.server().uri() + ", failure-policy: deny, timeout: 5s}", false);
        try (ServerProcess one = ServerProcess.start(config);
                ServerProcess two = ServerProcess.start(config)) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                int port = (i % 2 == 0 ? one : two).awaitPort();
                statuses.add(get(port, "/api/shared", "X-API-Key", "carol").statusCode());
            }
            HttpResponse<String> readyBefore = get(one.managementPort(), "/readyz");
            redis.server().kill();
            HttpResponse<String> readyDuring = get(one.managementPort(), "/readyz");
            int refusedWhileDown =
                    get(two.awaitPort(), "/api/other", "X-API-Key", "dave").statusCode();
            redis.server().restart();

            assertThat(statuses).containsExactly(200, 200, 200, 429, 429, 429);
            assertThat(readyBefore.statusCode()).isEqualTo(200);
            assertThat(readyDuring.statusCode()).isEqualTo(503);
            assertThat(refusedWhileDown)
                    .as("failure-policy: deny: the limiter is unavailable")
                    .isEqualTo(503);
        }
    }

    @Test
    void theJarWarmsUpOnRedisBeforeItSaysItListensAndLeavesNoTraceButItsOwnCount() throws Exception {
        Files.writeString(dir.resolve("ratelimit.yaml"), """
                domain: edge
                descriptors:
                  - key: tenant
                    tollgate_policy: per-client
                """);
        Path config = config("redis: {uri: " + redis.server().uri() + "}\nenvoy: {port: 0, host: 127.0.0.1, config: "
                + dir.resolve("ratelimit.yaml") + "}");
        try (ServerProcess server = ServerProcess.start(config)) {
            int port = server.managementPort();

            String metricsAtOnce = get(port, "/metrics").body();
            HttpResponse<String> readyAtOnce = get(port, "/readyz");

            assertThat(metricsAtOnce)
                    .as("the warm-up's decisions, on Redis, before the listening line, counted in their own meter")
                    .containsPattern("(?m)^tollgate_warm_up_decisions_total [1-9]");
            assertThat(metricsAtOnce.lines().filter(line -> !line.startsWith("#")))
                    .as("no decision, failure or request of the warm-up counted anywhere else, the priming of the"
                            + " Envoy file's policy per-client included")
                    .noneMatch(line -> line.contains("warm-up"))
                    .noneMatch(line -> line.matches("tollgate_(decisions|api_decisions|http_decisions"
                            + "|redis_failures|envoy_[a-z_]+)_total\\{.*} [1-9].*"))
                    .noneMatch(line -> line.startsWith("tollgate_server_requests_seconds_count"));
            assertThat(server.err()).as("the log").doesNotContain(" WARN ", " ERROR ");
            assertThat(readyAtOnce.statusCode()).isEqualTo(200);
            assertThat(redis.server().command("SCRIPT", "EXISTS", scriptDigest(TokenBucketScript.RESOURCE)))
                    .as("the scripts are loaded")
                    .isEqualTo(List.of(1L));
        }
    }

    @Test
    void aBadConfigurationExitsTwoWithTheFileAndLine() throws Exception {
        Path bad = Files.writeString(dir.resolve("bad.yaml"), "server:\n  port: 8080\n  prot: 1\n");

        ServerProcess server = ServerProcess.run(List.of(), "--config", bad.toString());
        int status = server.awaitExit();

        assertThat(status).isEqualTo(2);
        assertThat(server.err())
                .isEqualTo("tollgate: " + bad
                        + ":3: server: unknown setting 'prot'; known: allow-unauthenticated-decisions, allowed-hosts, decision-api-shares-rule-keys,"
                        + " decision-host, decision-port, decision-tls, expose-decision-api-publicly,"
                        + " expose-health-publicly, expose-metrics-publicly, forward-auth, host, idle-timeout,"
                        + " management-allow-unauthenticated,"
                        + " management-host, management-port, management-tls, management-token, max-body-size,"
                        + " max-connections, port, request-head-timeout, shutdown-timeout, tls, upstream,"
                        + " upstream-timeout, warm-up");
    }

    @Test
    void aTlsClientCannotRenegotiate() throws Exception {
        Path openssl = RequiredBinary.find("openssl", "openssl");
        TestCertificates.Authority authority = TestCertificates.authority("Tollgate Tests CA");
        TestCertificates.Pem certificate = authority.server().pem(dir, "server");
        Path config =
                Files.writeString(dir.resolve("tls.yaml"), """
                server:
                  port: 0
                  warm-up: false
                  tls:
                    certificate: %s
                    private-key: %s
                """.formatted(certificate.certificate(), certificate.key()));
        try (ServerProcess server = ServerProcess.start(config)) {
            Process client = new ProcessBuilder(
                            openssl.toString(), "s_client", "-tls1_2", "-connect", "127.0.0.1:" + server.awaitPort())
                    .redirectErrorStream(true)
                    .start();
            OutputStream in = client.getOutputStream();
            TimeUnit.SECONDS.sleep(2); // connected and shaken hands
            in.write("R\n".getBytes(StandardCharsets.US_ASCII)); // s_client's command: renegotiate
            in.flush();
            TimeUnit.SECONDS.sleep(2);
            try {
                in.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                in.flush();
                TimeUnit.SECONDS.sleep(2);
                in.close();
            } catch (IOException ended) {
                // s_client ended with its connection: the request could not be sent, as it should not
            }
            String output = new String(client.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            client.waitFor(30, TimeUnit.SECONDS);

            assertThat(output).contains("RENEGOTIATING").doesNotContain("HTTP/1.1 200");
            assertThat(output).containsIgnoringCase("handshake failure");
        }
    }

    @Test
    void versionPrintsTheVersionOfThePom() throws Exception {
        ServerProcess server = ServerProcess.run(List.of(), "--version");

        assertThat(server.awaitExit()).isZero();
        assertThat(server.out()).containsExactly("tollgate-server " + System.getProperty("tollgate.version"));
    }

    @Test
    void aRedisRequiredAtStartThatCannotBeReachedStopsTheStart() throws Exception {
        int closed = FreePorts.nobodyListens();
        Path config = config("redis: {uri: 'redis://127.0.0.1:" + closed + "', require-redis-at-start: true}");

        ServerProcess server = ServerProcess.run(List.of(), "--config", config.toString(), "--port", "0");

        assertThat(server.awaitExit()).isEqualTo(1);
        assertThat(server.err())
                .contains("tollgate: cannot start on 0.0.0.0:0 (decision API 127.0.0.1:0) (management 127.0.0.1:0):"
                        + " Redis is required at start (requireRedisAtStart), but"
                        + " it could not be reached: not connected to Redis at 127.0.0.1:" + closed
                        + ": Connection refused");
        assertThat(server.out()).isEmpty();
    }

    @Test
    void helpPrintsUsage() throws Exception {
        ServerProcess server = ServerProcess.run(List.of(), "--help");

        assertThat(server.awaitExit()).isZero();
        assertThat(String.join("\n", server.out()))
                .startsWith("Usage: java -jar tollgate-server.jar --config FILE [--port N]");
    }

    /** Returns the SHA-1 digest of a script of tollgate-redis as assembled, under which Redis caches it. */
    private static String scriptDigest(String script) {
        return new TokenBucketScript(script).digest();
    }

    private void awaitUpstreamSaw(String path) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (upstream.received().stream().noneMatch(r -> r.path().equals(path))) {
            assertThat(System.nanoTime()).as("the upstream saw %s", path).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }

    private HttpRequest.Builder request(int port, String path, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(60));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return request;
    }

    private HttpResponse<String> get(int port, String path, String... headers) throws Exception {
        return client.send(request(port, path, headers).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(int port, String path, String body) throws Exception {
        return client.send(
                request(port, path)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
