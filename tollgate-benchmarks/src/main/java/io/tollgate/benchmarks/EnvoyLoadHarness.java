package io.tollgate.benchmarks;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.tollgate.server.internal.envoy.proto.RateLimitDescriptor;
import io.tollgate.server.internal.envoy.proto.RateLimitRequest;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import io.tollgate.testing.RedisServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;

/**
 * Envoy's {@code ShouldRateLimit} over gRPC beside the decision API's {@code POST /v1/check} over HTTP/1.1,
 * against one Tollgate server on one Redis, in one run: the harness starts a redis-server and the built
 * server jar ({@code tollgate-server/target/tollgate-server.jar}, {@code -Xmx512m}, ParallelGC) as processes
 * of their own, warms both surfaces up for 15 s each, then keeps 64 and then 256 calls in flight on each surface, each call for one of 10 000 keys
 * (descriptor values) at random, far from its limit, so that every decision writes to Redis. gRPC runs on one
 * HTTP/2 connection, as an Envoy worker does; HTTP on as many kept-alive connections as calls in flight.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.EnvoyLoadHarness
 * [seconds per row] [warm-up seconds per row]} (default 10 and 10); {@code -Dharness.jar=PATH} runs another
 * build's server jar instead, for an A/B. Prints a Markdown table for docs/benchmarks.md. Everything listens on 127.0.0.1 and is stopped at the end.
 */
public final class EnvoyLoadHarness {

    private static final int KEYS = 10_000;
    private static final int[] IN_FLIGHT = {64, 256};
    /** The server jar under test: this build's, or another's for an A/B ({@code -Dharness.jar=PATH}). */
    private static final Path JAR =
            Path.of(System.getProperty("harness.jar", "tollgate-server/target/tollgate-server.jar"));

    private static final Pattern ENVOY_LINE = Pattern.compile("tollgate envoy rls listening on 127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern HTTP_LINE = Pattern.compile("tollgate listening on http://127\\.0\\.0\\.1:(\\d+)");

    private EnvoyLoadHarness() {}

    /** One surface under load: sends one call for {@code key} and completes when it is answered. */
    private interface Surface {
        CompletableFuture<Boolean> call(int key);
    }

    private record Row(String surface, int inFlight, double perSecond, Histogram latency, long errors) {}

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int warmUp = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        if (!Files.isRegularFile(JAR)) {
            throw new IllegalStateException(
                    JAR + " is missing: ./mvnw -B -q -DskipTests package -pl tollgate-server -am");
        }
        Path dir = Files.createTempDirectory("tollgate-envoy-bench");
        try (RedisServer redis = RedisServer.start()) {
            Files.writeString(dir.resolve("ratelimit.yaml"), """
                    domain: bench
                    descriptors:
                      - key: client
                        rate_limit:
                          unit: second
                          requests_per_unit: 1000000
                    """);
            Files.writeString(dir.resolve("tollgate.yaml"), """
                    server:
                      host: 127.0.0.1
                    redis:
                      uri: %s
                      failure-policy: allow
                    policies:
                      bench:
                        limits:
                          - capacity: 1000000
                            refill: 1000000/s
                    envoy:
                      port: 0
                      host: 127.0.0.1
                      config: %s
                    """.formatted(redis.uri(), dir.resolve("ratelimit.yaml")));
            Process server = new ProcessBuilder(
                            "java",
                            "-Xmx512m",
                            "-XX:+UseParallelGC",
                            "-jar",
                            JAR.toString(),
                            "--config",
                            dir.resolve("tollgate.yaml").toString(),
                            "--port",
                            "0")
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            try {
                int[] ports = ports(server);
                run(ports[0], ports[1], seconds, warmUp);
            } finally {
                server.destroy();
                server.waitFor(20, TimeUnit.SECONDS);
            }
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder())
                        .forEach(path -> path.toFile().delete());
            }
        }
    }

    /** Reads the server's two lines: the gRPC port, then the HTTP port. */
    private static int[] ports(Process server) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        int envoy = -1;
        for (String line; (line = out.readLine()) != null; ) {
            Matcher grpc = ENVOY_LINE.matcher(line);
            Matcher http = HTTP_LINE.matcher(line);
            if (grpc.matches()) {
                envoy = Integer.parseInt(grpc.group(1));
            } else if (http.matches()) {
                return new int[] {envoy, Integer.parseInt(http.group(1))};
            }
        }
        throw new IllegalStateException("the server stopped before it listened");
    }

    private static void run(int grpcPort, int httpPort, int seconds, int warmUp) throws Exception {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcPort)
                .usePlaintext()
                .directExecutor()
                .build();
        HttpClient http = new HttpClient(new HttpClientTransportOverHTTP(1));
        http.setMaxConnectionsPerDestination(1024);
        http.setMaxRequestsQueuedPerDestination(4096);
        http.start();
        try {
            RateLimitServiceGrpc.RateLimitServiceStub rls = RateLimitServiceGrpc.newStub(channel);
            List<RateLimitRequest> requests = new ArrayList<>(KEYS);
            List<byte[]> bodies = new ArrayList<>(KEYS);
            for (int i = 0; i < KEYS; i++) {
                requests.add(RateLimitRequest.newBuilder()
                        .setDomain("bench")
                        .addDescriptors(RateLimitDescriptor.newBuilder()
                                .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                        .setKey("client")
                                        .setValue("c-" + i)))
                        .build());
                bodies.add(("{\"policy\":\"bench\",\"key\":\"c-" + i + "\"}").getBytes(StandardCharsets.UTF_8));
            }
            Surface grpc = key -> {
                CompletableFuture<Boolean> done = new CompletableFuture<>();
                rls.shouldRateLimit(requests.get(key), new StreamObserver<>() {
                    @Override
                    public void onNext(RateLimitResponse response) {
                        done.complete(response.getOverallCode() == RateLimitResponse.Code.OK);
                    }

                    @Override
                    public void onError(Throwable failure) {
                        done.complete(false);
                    }

                    @Override
                    public void onCompleted() {}
                });
                return done;
            };
            URI check = URI.create("http://127.0.0.1:" + httpPort + "/v1/check");
            Surface api = key -> {
                CompletableFuture<Boolean> done = new CompletableFuture<>();
                http.newRequest(check)
                        .method("POST")
                        .body(new BytesRequestContent("application/json", bodies.get(key)))
                        .send(result -> done.complete(
                                result.isSucceeded() && result.getResponse().getStatus() == 200));
                return done;
            };
            // Both paths compiled before any row counts: on two shared cores the JIT takes tens of seconds.
            measure("warm-up", grpc, IN_FLIGHT[0], 1, 15);
            measure("warm-up", api, IN_FLIGHT[0], 1, 15);
            List<Row> rows = new ArrayList<>();
            for (int inFlight : IN_FLIGHT) {
                rows.add(measure("ShouldRateLimit (gRPC)", grpc, inFlight, seconds, warmUp));
                rows.add(measure("POST /v1/check (HTTP/1.1)", api, inFlight, seconds, warmUp));
            }
            System.out.println("| surface | in flight | decisions/s | p50 | p99 | errors |");
            System.out.println("| --- | --- | --- | --- | --- | --- |");
            for (Row row : rows) {
                System.out.printf(
                        Locale.ROOT,
                        "| %s | %d | %,.0f | %.2f ms | %.2f ms | %d |%n",
                        row.surface(),
                        row.inFlight(),
                        row.perSecond(),
                        row.latency().getValueAtPercentile(50) / 1e6,
                        row.latency().getValueAtPercentile(99) / 1e6,
                        row.errors());
            }
        } finally {
            channel.shutdownNow();
            http.stop();
        }
    }

    /**
     * Keeps {@code inFlight} calls outstanding, each sent as soon as one is answered, for the warm-up and then
     * for {@code seconds}; counts only the answers of the measured window.
     */
    private static Row measure(String name, Surface surface, int inFlight, int seconds, int warmUp)
            throws InterruptedException {
        AtomicLong answered = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        Histogram latency = new ConcurrentHistogram(TimeUnit.SECONDS.toNanos(10), 3);
        long start = System.nanoTime();
        long measureFrom = start + TimeUnit.SECONDS.toNanos(warmUp);
        long until = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
        CompletableFuture<?>[] loops = new CompletableFuture<?>[inFlight];
        for (int i = 0; i < inFlight; i++) {
            CompletableFuture<Void> loop = new CompletableFuture<>();
            loops[i] = loop;
            next(surface, measureFrom, until, answered, errors, latency, loop);
        }
        CompletableFuture.allOf(loops).join();
        return new Row(name, inFlight, answered.get() / (double) seconds, latency, errors.get());
    }

    private static void next(
            Surface surface,
            long measureFrom,
            long until,
            AtomicLong answered,
            AtomicLong errors,
            Histogram latency,
            CompletableFuture<Void> loop) {
        long sent = System.nanoTime();
        if (sent >= until) {
            loop.complete(null);
            return;
        }
        surface.call(ThreadLocalRandom.current().nextInt(KEYS)).whenComplete((ok, failure) -> {
            long now = System.nanoTime();
            if (sent >= measureFrom && now < until) {
                answered.incrementAndGet();
                latency.recordValue(Math.min(now - sent, TimeUnit.SECONDS.toNanos(10)));
                if (failure != null || !ok) {
                    errors.incrementAndGet();
                }
            }
            next(surface, measureFrom, until, answered, errors, latency, loop);
        });
    }
}
