package io.tollgate.benchmarks;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.tollgate.server.ServerConfig;
import io.tollgate.server.TollgateServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The real run behind docs/load-shedding.md: the Tollgate server as a proxy in front of an upstream that serves
 * {@value #WORKERS} requests at once (a fixed pool of threads, each request taking 15 ms plus an exponentially
 * distributed extra of mean 5 ms, so about 400 requests a second; the rest wait in its queue), offered an
 * open-loop Poisson load of 0.5, 1, 1.5, 2 and 3 times that capacity, a fifth of the requests {@code critical}, two
 * fifths {@code default} and two fifths {@code sheddable} (their plan, by {@code X-Plan}); each client gives up after
 * 1 s. Once without overload protection, once with it at its defaults; a fresh upstream and server each time.
 *
 * <p>Printed per step: the offered rate, the goodput (answers of 200 within 1 s, per second), the 99th percentile of
 * those answers' latency, the share of each priority served, the 503s of overload protection and the requests whose
 * client gave up. The first second of each step is left out, for the limit to settle.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.OverloadLoadHarness
 * [seconds per step, default 6]}. Loopback only; bounded in time (two runs of five steps).
 */
public final class OverloadLoadHarness {

    static final int WORKERS = 8;
    static final double BASE_MILLIS = 15;
    static final double EXTRA_MEAN_MILLIS = 5;
    static final double CAPACITY = WORKERS * 1000 / (BASE_MILLIS + EXTRA_MEAN_MILLIS);
    static final double[] FACTORS = {0.5, 1, 1.5, 2, 3};
    static final String[] PLANS = {"critical", "default", "sheddable"};
    static final double[] MIX = {0.2, 0.4, 0.4};
    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(1);

    private OverloadLoadHarness() {}

    /** One request's end. */
    private record Outcome(long sentNanos, int plan, int status, long latencyNanos) {}

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        System.out.printf(
                Locale.ROOT,
                "upstream: %d workers, %.0f ms + exp(%.0f ms) each, capacity about %.0f requests/s; %d s per step%n%n",
                WORKERS,
                BASE_MILLIS,
                EXTRA_MEAN_MILLIS,
                CAPACITY,
                seconds);
        System.out.println("| run | offered | offered/s | goodput/s | p99 of served | critical served | default served"
                + " | sheddable served | 503 (shed) | gave up |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (boolean protect : new boolean[] {false, true}) {
            run(protect, seconds);
        }
        System.exit(0); // the clients' selector threads would keep the JVM alive
    }

    private static void run(boolean protect, int seconds) throws Exception {
        ExecutorService workers = Executors.newFixedThreadPool(WORKERS);
        HttpServer upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
        upstream.setExecutor(workers);
        upstream.createContext("/", OverloadLoadHarness::serve);
        upstream.start();
        String yaml = """
                policies:
                  critical: {priority: critical, limits: [{capacity: 1000000, refill: 1000000/s}]}
                  default: {priority: default, limits: [{capacity: 1000000, refill: 1000000/s}]}
                  sheddable: {priority: sheddable, limits: [{capacity: 1000000, refill: 1000000/s}]}
                rules:
                  - path: /**
                    key: header:X-Client
                    policy: default
                    policy-from: {header: X-Plan}
                overload: {enabled: %s}
                top-keys: {enabled: false}
                server:
                  upstream: http://127.0.0.1:%d
                  upstream-timeout: 5s
                """.formatted(protect, upstream.getAddress().getPort());
        TollgateServer server = TollgateServer.start(
                ServerConfig.parse(yaml, "overload-harness.yaml").withPort(0));
        HttpClient client = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(1))
                .executor(Executors.newFixedThreadPool(2))
                .build();
        URI uri = URI.create("http://127.0.0.1:" + server.port() + "/work");
        Random random = new Random(34);
        try {
            for (double factor : FACTORS) {
                ConcurrentLinkedQueue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
                List<CompletableFuture<?>> sent = new ArrayList<>();
                double rate = factor * CAPACITY;
                long start = System.nanoTime();
                long end = start + TimeUnit.SECONDS.toNanos(seconds);
                long next = start;
                long counted = start + TimeUnit.SECONDS.toNanos(1);
                int id = 0;
                while (next < end) {
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    int plan = plan(random);
                    long sentAt = next;
                    HttpRequest request = HttpRequest.newBuilder(uri)
                            .timeout(CLIENT_TIMEOUT)
                            .header("X-Plan", PLANS[plan])
                            .header("X-Client", "c" + (id++ % 1000))
                            .GET()
                            .build();
                    CompletableFuture<?> one = client.sendAsync(request, HttpResponse.BodyHandlers.discarding())
                            .handle((response, failure) -> {
                                if (sentAt >= counted) {
                                    outcomes.add(new Outcome(
                                            sentAt,
                                            plan,
                                            failure == null ? response.statusCode() : 0,
                                            System.nanoTime() - sentAt));
                                }
                                return null;
                            });
                    sent.add(one);
                    next += (long) (-Math.log(1 - random.nextDouble()) * 1e9 / rate);
                }
                CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
                report(protect, factor, rate, seconds - 1, outcomes);
            }
        } finally {
            server.close();
            upstream.stop(0);
            workers.shutdownNow();
        }
    }

    private static void report(
            boolean protect, double factor, double rate, int seconds, ConcurrentLinkedQueue<Outcome> outcomes) {
        int[] offered = new int[3];
        int[] served = new int[3];
        int shed = 0;
        int gaveUp = 0;
        List<Long> latencies = new ArrayList<>();
        for (Outcome outcome : outcomes) {
            offered[outcome.plan()]++;
            boolean inTime = outcome.latencyNanos() <= CLIENT_TIMEOUT.toNanos();
            if (outcome.status() == 200 && inTime) {
                served[outcome.plan()]++;
                latencies.add(outcome.latencyNanos());
            } else if (outcome.status() == 503) {
                shed++;
            } else {
                gaveUp++;
            }
        }
        long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        String p99 = sorted.length == 0
                ? "none"
                : String.format(
                        Locale.ROOT, "%.0f ms", sorted[Math.max(0, (int) Math.ceil(0.99 * sorted.length) - 1)] / 1e6);
        System.out.printf(
                Locale.ROOT,
                "| %s | %.1fx | %.0f | %.0f | %s | %s | %s | %s | %d | %d |%n",
                protect ? "with overload protection" : "without",
                factor,
                rate,
                (double) Arrays.stream(served).sum() / seconds,
                p99,
                share(served[0], offered[0]),
                share(served[1], offered[1]),
                share(served[2], offered[2]),
                shed,
                gaveUp);
    }

    private static String share(int served, int offered) {
        return offered == 0 ? "none" : String.format(Locale.ROOT, "%.1f %%", 100.0 * served / offered);
    }

    private static int plan(Random random) {
        double draw = random.nextDouble();
        for (int i = 0; i < MIX.length; i++) {
            draw -= MIX[i];
            if (draw < 0) {
                return i;
            }
        }
        return MIX.length - 1;
    }

    private static void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            double millis =
                    BASE_MILLIS - Math.log(1 - ThreadLocalRandom.current().nextDouble()) * EXTRA_MEAN_MILLIS;
            Thread.sleep((long) millis, (int) ((millis % 1) * 1_000_000));
            byte[] body = "done".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
