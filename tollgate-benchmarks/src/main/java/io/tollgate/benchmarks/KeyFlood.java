package io.tollgate.benchmarks;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.tollgate.testing.RedisServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;

/**
 * A flood of distinct keys, as an attacker who changes its key on every request sends it: one million keys, each
 * asked once, at full speed through the decision API ({@code POST /v1/check}, 128 calls in flight on kept-alive
 * connections) of one server jar on one redis-server, both started by the harness. It prints what the flood
 * leaves behind: Redis's memory per key and whether every key has an expiry ({@code INFO keyspace}), the
 * server's heap after a full collection and its resident memory. Then it fills Redis: with {@code maxmemory}
 * reached under {@code noeviction} it floods on and counts what the failure policy decided and the log lines
 * that said so; under {@code volatile-ttl} it counts the keys Redis evicted and the decisions still made by
 * Redis. In the same run, on the same Redis, Bucket4j's Lettuce proxy manager (expiring its keys when full, as
 * its documentation advises) takes the same million keys, for its memory per key.
 *
 * <p>The flood's policy allows 10 requests an hour: a key asked once lives until its token is back, 6 minutes,
 * so that every key of the flood is still in Redis when it is measured. Last, a flood on a policy of 100 a
 * minute shows how soon a key asked once is gone (its token is back in 0.6 s).
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.KeyFlood [keys]}
 * (default 1 000 000) after {@code ./mvnw -B -q -DskipTests install}; needs {@code redis-server} and {@code jcmd}
 * on {@code PATH}. Everything listens on 127.0.0.1 and is stopped at the end.
 */
public final class KeyFlood {

    private static final int IN_FLIGHT = 128;
    private static final Path JAR =
            Path.of(System.getProperty("harness.jar", "tollgate-server/target/tollgate-server.jar"));
    private static final Pattern HTTP_LINE = Pattern.compile("tollgate listening on http://127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    private KeyFlood() {}

    /** What one flood's answers were. */
    private record Answers(long allowed, long refused, long degraded, long failed, double seconds) {
        long total() {
            return allowed + refused + failed;
        }
    }

    public static void main(String[] args) throws Exception {
        int keys = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        if (!Files.isRegularFile(JAR)) {
            throw new IllegalStateException(JAR + " is missing: ./mvnw -B -q -DskipTests install");
        }
        Path dir = Files.createTempDirectory("tollgate-key-flood");
        Path log = dir.resolve("server.log");
        try (RedisServer redis = RedisServer.start()) {
            Files.writeString(dir.resolve("tollgate.yaml"), """
                    server:
                      host: 127.0.0.1
                    redis:
                      uri: %s
                    policies:
                      hourly:
                        limits:
                          - capacity: 10
                            refill: 10/h
                      per-minute:
                        limits:
                          - capacity: 100
                            refill: 100/min
                    """.formatted(redis.uri()));
            Process server = new ProcessBuilder(
                            "java",
                            "-Xmx512m",
                            "-jar",
                            JAR.toString(),
                            "--config",
                            dir.resolve("tollgate.yaml").toString(),
                            "--port",
                            "0")
                    .redirectError(log.toFile())
                    .start();
            HttpClient http = new HttpClient(new HttpClientTransportOverHTTP(1));
            http.setMaxConnectionsPerDestination(IN_FLIGHT);
            http.setMaxRequestsQueuedPerDestination(4 * IN_FLIGHT);
            http.start();
            try {
                URI check = URI.create("http://127.0.0.1:" + port(server) + "/v1/check");
                AtomicInteger next = new AtomicInteger();
                IntFunction<CompletableFuture<Integer>> ask = key -> call(http, check, "hourly", "k-" + key);

                flood(ask, next, 200_000); // the JIT's turn: these keys are flushed before anything counts
                redis.command("FLUSHALL");
                long heapBefore = heapAfterCollection(server.pid());
                long memoryBefore = usedMemory(redis);

                Answers flood = flood(ask, next, keys);
                long memoryAfter = usedMemory(redis);
                long heapAfter = heapAfterCollection(server.pid());
                String keyspace = keyspace(redis);
                Object ttl = redis.command("PTTL", "tollgate:hourly:api:k-" + (next.get() - 1));

                System.out.printf(
                        Locale.ROOT,
                        "%n| what | figure |%n| --- | --- |%n"
                                + "| distinct keys asked | %,d in %.1f s (%,.0f a second), %,d allowed, %,d failed |%n"
                                + "| Redis keys afterwards | %s |%n"
                                + "| Redis memory per key | %,d bytes (used_memory %,d -> %,d bytes) |%n"
                                + "| the last key's expiry | %s ms |%n"
                                + "| server heap after a full collection | %,d KiB before, %,d KiB after |%n"
                                + "| server resident memory | %,d KiB |%n",
                        flood.total(),
                        flood.seconds(),
                        flood.total() / flood.seconds(),
                        flood.allowed(),
                        flood.failed(),
                        keyspace,
                        (memoryAfter - memoryBefore) / keys,
                        memoryBefore,
                        memoryAfter,
                        ttl,
                        heapBefore,
                        heapAfter,
                        residentKiB(server.pid()));

                // Full: Redis refuses every write, the failure policy decides, the log says so once.
                redis.command("CONFIG", "SET", "maxmemory-policy", "noeviction");
                redis.command("CONFIG", "SET", "maxmemory", Long.toString(usedMemory(redis)));
                Answers full = flood(ask, next, keys / 10);
                long heapFull = heapAfterCollection(server.pid());
                redis.command("CONFIG", "SET", "maxmemory", "0");
                Answers room = flood(ask, next, keys / 2); // long enough for the quiet period: 10 s

                long heapRoom = heapAfterCollection(server.pid());
                List<String> lines = Files.readAllLines(log);
                System.out.printf(
                        Locale.ROOT,
                        "| noeviction, maxmemory reached: keys asked | %,d: %,d decided by the failure policy (local),"
                                + " %,d allowed, %,d refused, %,d failed |%n"
                                + "| its log lines | %d saying Redis refuses writes, %d saying it takes them again |%n"
                                + "| server heap after a full collection | %,d KiB |%n"
                                + "| room again: keys asked | %,d: %,d decided by the failure policy; heap after a full"
                                + " collection %,d KiB |%n",
                        full.total(),
                        full.degraded(),
                        full.allowed(),
                        full.refused(),
                        full.failed(),
                        lines.stream()
                                .filter(line -> line.contains("refuses writes"))
                                .count(),
                        lines.stream()
                                .filter(line -> line.contains("takes writes again"))
                                .count(),
                        heapFull,
                        room.total(),
                        room.degraded(),
                        heapRoom);

                // Full, evicting the keys nearest their expiry: decisions stay on Redis, buckets are forgotten.
                long evictedBefore = Long.parseLong(redis.info("evicted_keys"));
                redis.command("CONFIG", "SET", "maxmemory-policy", "volatile-ttl");
                redis.command("CONFIG", "SET", "maxmemory", Long.toString(usedMemory(redis)));
                Answers evicting = flood(ask, next, keys / 5);
                System.out.printf(
                        Locale.ROOT,
                        "| volatile-ttl, maxmemory reached: keys asked | %,d: %,d decided by the failure policy,"
                                + " %,d keys evicted, Redis keys afterwards %s |%n",
                        evicting.total(),
                        evicting.degraded(),
                        Long.parseLong(redis.info("evicted_keys")) - evictedBefore,
                        keyspace(redis));
                redis.command("CONFIG", "SET", "maxmemory", "0");
                redis.command("CONFIG", "SET", "maxmemory-policy", "noeviction");

                // A policy that refills a token in 0.6 s: a key asked once is gone 0.6 s later.
                redis.command("FLUSHALL");
                Answers minute = flood(key -> call(http, check, "per-minute", "k-" + key), next, keys / 5);
                System.out.printf(
                        Locale.ROOT,
                        "| 100 a minute: keys asked | %,d in %.1f s; Redis keys right afterwards %s |%n",
                        minute.total(),
                        minute.seconds(),
                        keyspace(redis));
            } finally {
                http.stop();
                server.destroy();
                server.waitFor(20, TimeUnit.SECONDS);
            }

            bucket4j(redis, keys);
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder())
                        .forEach(path -> path.toFile().delete());
            }
        }
    }

    /** The same million keys through Bucket4j's Lettuce proxy manager, on the same Redis, emptied first. */
    private static void bucket4j(RedisServer redis, int keys) throws Exception {
        redis.command("FLUSHALL");
        BucketConfiguration configuration = BucketConfiguration.builder()
                .addLimit(limit -> limit.capacity(10).refillGreedy(10, Duration.ofHours(1)))
                .build();
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
            AsyncProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(connection)
                    .expirationAfterWrite(
                            ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO))
                    .build()
                    .asAsync();
            long before = usedMemory(redis);
            Answers flood = flood(
                    key -> buckets.builder()
                            .build(
                                    ("k-" + key).getBytes(StandardCharsets.UTF_8),
                                    () -> CompletableFuture.completedFuture(configuration))
                            .tryConsume(1)
                            .thenApply(allowed -> allowed ? 200 : 429),
                    new AtomicInteger(),
                    keys);
            System.out.printf(
                    Locale.ROOT,
                    "| Bucket4j (Lettuce, CAS), the same keys: Redis memory per key | %,d bytes, keys afterwards %s,"
                            + " %,.0f a second |%n",
                    (usedMemory(redis) - before) / keys,
                    keyspace(redis),
                    flood.total() / flood.seconds());
        } finally {
            client.shutdown();
        }
    }

    /** Asks {@code count} keys not asked before, {@link #IN_FLIGHT} at a time, each as soon as one is answered. */
    private static Answers flood(IntFunction<CompletableFuture<Integer>> ask, AtomicInteger next, int count)
            throws InterruptedException {
        AtomicLong allowed = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong degraded = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        int end = next.get() + count;
        long start = System.nanoTime();
        CompletableFuture<?>[] loops = new CompletableFuture<?>[IN_FLIGHT];
        for (int i = 0; i < IN_FLIGHT; i++) {
            loops[i] = new CompletableFuture<Void>();
            loop(ask, next, end, allowed, refused, degraded, failed, (CompletableFuture<Void>) loops[i]);
        }
        CompletableFuture.allOf(loops).join();
        return new Answers(
                allowed.get(), refused.get(), degraded.get(), failed.get(), (System.nanoTime() - start) / 1e9);
    }

    private static void loop(
            IntFunction<CompletableFuture<Integer>> ask,
            AtomicInteger next,
            int end,
            AtomicLong allowed,
            AtomicLong refused,
            AtomicLong degraded,
            AtomicLong failed,
            CompletableFuture<Void> done) {
        int key = next.getAndIncrement();
        if (key >= end) {
            next.set(end);
            done.complete(null);
            return;
        }
        ask.apply(key).whenComplete((status, failure) -> {
            if (failure != null || status == null || status < 0) {
                failed.incrementAndGet();
            } else {
                // the answer's status, plus 1000 when the body said the failure policy decided
                if (status >= 1000) {
                    degraded.incrementAndGet();
                }
                int code = status % 1000;
                (code == 200 ? allowed : code == 429 ? refused : failed).incrementAndGet();
            }
            loop(ask, next, end, allowed, refused, degraded, failed, done);
        });
    }

    /** One {@code POST /v1/check}: its status, plus 1000 when the answer says it is degraded, or -1. */
    private static CompletableFuture<Integer> call(HttpClient http, URI check, String policy, String key) {
        CompletableFuture<Integer> answer = new CompletableFuture<>();
        byte[] body = ("{\"policy\":\"" + policy + "\",\"key\":\"" + key + "\"}").getBytes(StandardCharsets.UTF_8);
        http.newRequest(check)
                .method("POST")
                .body(new BytesRequestContent("application/json", body))
                .send(new org.eclipse.jetty.client.BufferingResponseListener() {
                    @Override
                    public void onComplete(org.eclipse.jetty.client.Result result) {
                        if (result.isFailed()) {
                            System.err.println("failed: " + result.getFailure());
                            answer.complete(-1);
                            return;
                        }
                        int status = result.getResponse().getStatus();
                        if (status != 200 && status != 429) {
                            System.err.println(status + ": " + getContentAsString());
                        }
                        boolean degraded = getContentAsString().contains("\"degraded\":true");
                        answer.complete(result.getResponse().getStatus() + (degraded ? 1000 : 0));
                    }
                });
        return answer;
    }

    private static int port(Process server) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        for (String line; (line = out.readLine()) != null; ) {
            Matcher http = HTTP_LINE.matcher(line);
            if (http.matches()) {
                return Integer.parseInt(http.group(1));
            }
        }
        throw new IllegalStateException("the server stopped before it listened");
    }

    private static long usedMemory(RedisServer redis) {
        return Long.parseLong(redis.info("used_memory"));
    }

    /** Redis's {@code db0} line: how many keys, how many with an expiry. */
    private static String keyspace(RedisServer redis) {
        try {
            return redis.info("db0");
        } catch (IllegalArgumentException empty) {
            return "none";
        }
    }

    /** The server's heap in use, in KiB, after {@code jcmd PID GC.run}. */
    private static long heapAfterCollection(long pid) throws Exception {
        jcmd(pid, "GC.run");
        Matcher used = HEAP_USED.matcher(jcmd(pid, "GC.heap_info"));
        if (!used.find()) {
            throw new IllegalStateException("jcmd GC.heap_info printed no heap in use");
        }
        return Long.parseLong(used.group(1));
    }

    private static long residentKiB(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        return -1;
    }

    private static String jcmd(long pid, String command) throws Exception {
        Process jcmd = new ProcessBuilder("jcmd", Long.toString(pid), command)
                .redirectErrorStream(true)
                .start();
        String out = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        jcmd.waitFor(30, TimeUnit.SECONDS);
        return out;
    }
}
