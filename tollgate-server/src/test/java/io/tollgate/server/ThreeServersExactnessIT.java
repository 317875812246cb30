package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.testing.RedisExtension;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a new user tries before trusting a shared limit: three server jars started cold on one Redis with the
 * default settings (budget 50 ms, {@code failure-policy: local}), and a burst of concurrent decisions for one key
 * spread over the three. Exactly the capacity is admitted, in every round, with fresh servers each time:
 * the servers warm up before they say they listen, a request whose budget runs out is still charged in
 * Redis, and the fallback decides on what Redis last said of the key, not on a full bucket.
 */
@Timeout(600)
class ThreeServersExactnessIT {

    private static final int ROUNDS = 3;
    private static final int CAPACITY = 200;
    private static final int REQUESTS = 600;
    private static final int CLIENT_THREADS = 12;

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    @TempDir
    Path dir;

    /** Jetty's client, not java.net.http's, whose pool loses an answer now and then under load (see ServerOnRedisTest). */
    private final HttpClient client = new HttpClient();

    @BeforeEach
    void startClient() throws Exception {
        client.start();
    }

    @AfterEach
    void stopClient() throws Exception {
        client.stop();
    }

    @Test
    void threeColdServersOnOneRedisAdmitExactlyTheCapacity() throws Exception {
        Path config = Files.writeString(
                dir.resolve("tollgate.yaml"), """
                redis:
                  uri: %s
                policies:
                  per-client:
                    limits:
                      - capacity: %d
                        refill: 1/h
                """.formatted(redis.server().uri(), CAPACITY));
        List<Round> rounds = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            redis.server().command("FLUSHALL");
            rounds.add(round(config));
        }

        // Degraded decisions are reported, not asserted: on two busy cores a JVM may stall past the budget
        // now and then (docs/resilience.md measures how often). Whatever decided, the count must be exact.
        rounds.forEach(round -> System.out.printf(
                "three cold servers: %d allowed, %d refused, %d degraded %s%n",
                round.allowed(), round.refused(), round.degraded(), round.log()));
        assertThat(rounds).allSatisfy(round -> {
            assertThat(round.allowed()).as("allowed in %s", round).isEqualTo(CAPACITY);
            assertThat(round.refused()).as("refused in %s", round).isEqualTo(REQUESTS - CAPACITY);
        });
    }

    /** Starts three servers at once, cold, sends the burst, and stops them. */
    private Round round(Path config) throws Exception {
        List<CompletableFuture<ServerProcess>> starting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return ServerProcess.start(config);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        List<ServerProcess> servers = new ArrayList<>();
        try {
            for (CompletableFuture<ServerProcess> server : starting) {
                servers.add(server.join());
            }
            int[] ports = new int[servers.size()];
            for (int i = 0; i < ports.length; i++) {
                ports[i] = servers.get(i).awaitPort();
            }
            Round round = burst(ports);
            List<String> warnings = new ArrayList<>();
            for (ServerProcess server : servers) {
                for (String line : server.err().split("\n")) {
                    if (line.contains("degraded")) {
                        warnings.add(line);
                    }
                }
            }
            return new Round(round.allowed(), round.refused(), round.degraded(), warnings);
        } finally {
            for (CompletableFuture<ServerProcess> server : starting) {
                ServerProcess started =
                        server.handle((process, failure) -> process).join();
                if (started != null) {
                    started.close();
                }
            }
        }
    }

    private Round burst(int[] ports) throws Exception {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger allowed = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger degraded = new AtomicInteger();
        List<String> unexpected = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(CLIENT_THREADS);
        try {
            List<Future<?>> clients = new ArrayList<>();
            for (int t = 0; t < CLIENT_THREADS; t++) {
                clients.add(threads.submit(() -> {
                    for (int i; (i = next.getAndIncrement()) < REQUESTS; ) {
                        ContentResponse response = check(ports[i % ports.length]);
                        if (response.getContentAsString().contains("\"degraded\":true")) {
                            degraded.incrementAndGet();
                        }
                        switch (response.getStatus()) {
                            case 200 -> allowed.incrementAndGet();
                            case 429 -> refused.incrementAndGet();
                            default -> {
                                synchronized (unexpected) {
                                    unexpected.add(response.getStatus() + " " + response.getContentAsString());
                                }
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> c : clients) {
                c.get();
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(unexpected).isEmpty();
        return new Round(allowed.get(), refused.get(), degraded.get(), List.of());
    }

    private ContentResponse check(int port) throws Exception {
        return client.POST(URI.create("http://127.0.0.1:" + port + "/v1/check"))
                .body(new StringRequestContent("application/json", "{\"policy\":\"per-client\",\"key\":\"alice\"}"))
                .timeout(30, TimeUnit.SECONDS)
                .send();
    }

    private record Round(int allowed, int refused, int degraded, List<String> log) {}
}
