package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.TestDepth;
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
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a new user tries before trusting a shared limit: three server jars started cold on one Redis with the
 * default settings (budget 50 ms, {@code failure-policy: local}), and a burst of concurrent decisions for one key
 * spread over the three. Never more than the capacity is admitted, in every round, with fresh servers each time,
 * and Redis owes exactly the tokens admitted: the servers warm up before they say they listen, and a request
 * whose budget runs out while Redis answers is refused as the limiter being unavailable (503) rather than
 * guessed, its token given back when Redis's answer comes. Without such a request, exactly the capacity.
 */
@Order(3) // after the jar's tests, once the modules beside the server are done
@Timeout(600)
class ThreeServersExactnessIT {

    /** One round in the usual build, ten in the deep run ({@code -Pdeep}). */
    private static final int ROUNDS = TestDepth.runs(1, 10);

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
        List<Long> owed = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            redis.server().command("FLUSHALL");
            rounds.add(round(config));
            owed.add(tokensOwed("tollgate:per-client:api:alice"));
        }

        // Degraded decisions are reported, not asserted: on two busy cores a JVM may stall past the budget
        // now and then (docs/resilience.md measures how often). Whatever decided, nothing over the limit.
        for (int i = 0; i < ROUNDS; i++) {
            Round round = rounds.get(i);
            System.out.printf(
                    "three cold servers: %d allowed, %d refused, %d unavailable, %d degraded, Redis owes %d %s%n",
                    round.allowed(), round.refused(), round.unavailable(), round.degraded(), owed.get(i), round.log());
        }
        for (int i = 0; i < ROUNDS; i++) {
            Round round = rounds.get(i);
            assertThat(round.allowed()).as("allowed in %s", round).isLessThanOrEqualTo(CAPACITY);
            assertThat(round.allowed() + round.refused() + round.unavailable())
                    .as("answered in %s", round)
                    .isEqualTo(REQUESTS);
            assertThat(owed.get(i))
                    .as("Redis owes what was admitted in %s", round)
                    .isEqualTo(round.allowed());
            if (round.unavailable() == 0) {
                assertThat(round.allowed()).as("allowed in %s", round).isEqualTo(CAPACITY);
            }
        }
    }

    /** The tokens the key's bucket owes in Redis now, once the refunds of late refusals have landed. */
    private static long tokensOwed(String key) throws InterruptedException {
        long owed = -1;
        for (int attempt = 0; attempt < 50; attempt++) { // a refund may trail the last answer a little
            Object stored = redis.server().command("GET", key);
            long now = redis.server().timeMicros();
            long next = 0;
            if (stored != null) {
                String[] parts = ((String) stored).split("\\|");
                long debt = Long.parseLong(parts[parts.length - 1]) - (now - Long.parseLong(parts[0]));
                next = (debt + 3_599_999_999L) / 3_600_000_000L; // a token an hour, a tick per microsecond
            }
            if (next == owed) {
                return owed;
            }
            owed = next;
            Thread.sleep(100);
        }
        return owed;
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
            return new Round(round.allowed(), round.refused(), round.unavailable(), round.degraded(), warnings);
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
        AtomicInteger unavailable = new AtomicInteger();
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
                            case 503 -> {
                                // Late while Redis answers: refused as failing closed refuses, never guessed
                                if (!response.getContentAsString().contains("urn:tollgate:limiter-unavailable")) {
                                    synchronized (unexpected) {
                                        unexpected.add("503 " + response.getContentAsString());
                                    }
                                }
                                unavailable.incrementAndGet();
                            }
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
        return new Round(allowed.get(), refused.get(), unavailable.get(), degraded.get(), List.of());
    }

    private ContentResponse check(int port) throws Exception {
        return client.POST(URI.create("http://127.0.0.1:" + port + "/v1/check"))
                .body(new StringRequestContent("application/json", "{\"policy\":\"per-client\",\"key\":\"alice\"}"))
                .timeout(30, TimeUnit.SECONDS)
                .send();
    }

    private record Round(int allowed, int refused, int unavailable, int degraded, List<String> log) {}
}
