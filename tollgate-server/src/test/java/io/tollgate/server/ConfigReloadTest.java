package io.tollgate.server;

import static io.tollgate.server.DecisionApiTest.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.testing.RedisExtension;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The configuration changes while the server runs, under load: through the admin API and when the file
 * changes; a broken file changes nothing; the swap is whole and the buckets stay. In memory and on Redis.
 */
class ConfigReloadTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @TempDir
    Path dir;

    private final List<RunningServer> servers = new ArrayList<>();

    @AfterEach
    void stop() {
        servers.forEach(RunningServer::close);
        redis.server().command("FLUSHALL");
    }

    private static String file(String store, int capacity) {
        return """
                server:
                  management-port: 0
                %s
                policies:
                  per-client:
                    limits:
                      - capacity: %d
                        refill: 1/h
                """.formatted(store, capacity);
    }

    private String store(String which) {
        return which.equals("redis") ? "redis:\n  uri: " + redis.server().uri() + "\n  timeout: 200ms" : "";
    }

    private RunningServer start(Path file) throws Exception {
        RunningServer server = RunningServer.start(ServerConfig.load(file).withPort(0));
        servers.add(server);
        return server;
    }

    private static int check(RunningServer server, String key) {
        return server.post("/v1/check", "{\"policy\": \"per-client\", \"key\": \"" + key + "\"}")
                .statusCode();
    }

    private static int admitted(RunningServer server, String key, int requests) {
        int allowed = 0;
        for (int i = 0; i < requests; i++) {
            allowed += check(server, key) == 200 ? 1 : 0;
        }
        return allowed;
    }

    /** Writes the file with a modification time that differs from the last, whatever the clock's grain. */
    private static void rewrite(Path file, String text, int generation) throws Exception {
        Files.writeString(file, text);
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(generation)));
    }

    @ParameterizedTest(name = "store: {0}")
    @ValueSource(strings = {"memory", "redis"})
    void theAdminCallAppliesNewLimitsAtOnceUnderLoadAndTheBucketsStay(String store) throws Exception {
        Path file = Files.writeString(dir.resolve("tollgate.yaml"), file(store(store), 5));
        RunningServer server = start(file);
        int spentBefore = admitted(server, "alice", 3);
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        AtomicBoolean loading = new AtomicBoolean(true);
        Thread load = new Thread(() -> {
            int i = 0;
            while (loading.get()) {
                statuses.computeIfAbsent(check(server, "load-" + (i++ % 50)), s -> new AtomicInteger())
                        .incrementAndGet();
            }
        });
        load.start();
        try {
            Thread.sleep(200);
            rewrite(file, file(store(store), 10), 5);
            HttpResponse<String> reload = server.management("POST", "/admin/reload");
            int aliceAfter = admitted(server, "alice", 20);
            int bobAfter = admitted(server, "bob", 20);
            Thread.sleep(200);

            assertThat(spentBefore).isEqualTo(3);
            assertThat(reload.statusCode()).isEqualTo(200);
            assertThat(reload.body())
                    .isEqualTo("{\"reloaded\":true,\"detail\":\"reloaded " + file
                            + ": 1 policy, 0 rules\",\"restart_required\":[]}");
            assertThat(aliceAfter)
                    .as("alice keeps her 3 spent tokens of the bigger bucket")
                    .isEqualTo(7);
            assertThat(bobAfter).isEqualTo(10);
        } finally {
            loading.set(false);
            load.join();
        }
        assertThat(statuses.keySet()).as("no request failed during the swap").isSubsetOf(200, 429);
        assertThat(statuses.values().stream().mapToInt(AtomicInteger::get).sum())
                .as("requests sent throughout")
                .isGreaterThan(20);
        assertThat(server.management("GET", "/metrics").body())
                .contains("tollgate_config_reloads_total{result=\"reloaded\"} 1.0");
    }

    @Test
    void aChangedFileIsReadWithinASecondOrTwo() throws Exception {
        Path file = Files.writeString(dir.resolve("tollgate.yaml"), file("", 2));
        RunningServer server = start(file);

        rewrite(file, file("", 6), 5);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!server.management("GET", "/admin/policies").body().contains("\"capacity\":6")
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }

        assertThat(admitted(server, "carol", 10)).isEqualTo(6);
    }

    @Test
    void aBrokenFileChangesNothingAndSaysWhereItIsBroken() throws Exception {
        Path file = Files.writeString(dir.resolve("tollgate.yaml"), file("", 4));
        RunningServer server = start(file);
        check(server, "dave");

        rewrite(file, file("", 0), 5);
        HttpResponse<String> reload = server.management("POST", "/admin/reload");

        assertProblem(
                reload,
                422,
                "The configuration was not reloaded; the running one stays: " + file
                        + ":7: policies.per-client.limits[0]: capacity must be at least 1, was 0");
        assertThat(admitted(server, "dave", 10)).isEqualTo(3);
        assertThat(server.management("GET", "/metrics").body())
                .contains("tollgate_config_reloads_total{result=\"failed\"} 1.0")
                .contains("tollgate_config_reloads_total{result=\"reloaded\"} 0.0")
                .contains("tollgate_config_last_reload_successful 0.0");
    }

    @Test
    void settingsOfTheStartAreReportedAndKeptUntilTheNextOne() throws Exception {
        Path file = Files.writeString(dir.resolve("tollgate.yaml"), file("", 4));
        RunningServer server = start(file);

        rewrite(file, file("", 4).replace("management-port: 0", "management-port: 0\n  shutdown-timeout: 3s"), 5);
        HttpResponse<String> reload = server.management("POST", "/admin/reload");

        assertThat(reload.body()).endsWith("\"restart_required\":[\"server.shutdown-timeout\"]}");
        assertThat(admitted(server, "erin", 10)).isEqualTo(4);
    }

    @Test
    void aServerNotStartedFromAFileCannotReload() throws Exception {
        RunningServer server = RunningServer.start(file("", 4));
        servers.add(server);

        assertProblem(
                server.management("POST", "/admin/reload"),
                409,
                "This server was not started from a configuration file.");
        assertThat(server.management("GET", "/admin/reload").statusCode()).isEqualTo(405);
    }
}
