package io.tollgate.server;

import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.WarmUpKeys;
import io.tollgate.http.RequestLimiter;
import io.tollgate.server.internal.envoy.EnvoyService;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the server's paths before it says it is ready, so that the first real requests do not pay for
 * connecting to the store, loading classes and compiling code, and so do not run out of the store's time
 * budget: the store's and the request limiter's own warm-ups ({@link RequestLimiter#warmUp}, which also runs
 * the proxy's answer path), then the decision API's parsing, deciding and
 * rendering, allowed and refused, on policies of its own ({@value #POLICY_NAME} and {@value
 * #REFUSING_POLICY_NAME}, keys no client uses), then requests over the loopback to the server's own {@code
 * /healthz}, through the event loops' parsing and writing, and with an {@code envoy} section {@code ShouldRateLimit} calls to
 * its own rate limit service ({@link EnvoyService#warmUp}); then it waits until the JIT has compiled what ran, and
 * collects the garbage the warm-up left, so that no collection pause falls on the first real requests. A
 * decision's answer is rendered on the thread that completes it, which for Redis is Lettuce's I/O thread:
 * a first refusal rendered cold there would hold up every other answer behind it.
 */
final class WarmUp {

    /**
     * The longest the server spends warming up before it says it is ready anyway, but for the Envoy policies'
     * priming and the wait for what it compiled ({@link #PRIMING_FLOOR}, {@link #COMPILATION_FLOOR}).
     */
    static final Duration LIMIT = Duration.ofSeconds(20);

    static final String POLICY_NAME = RateLimiter.WARM_UP_POLICY_PREFIX;
    static final String REFUSING_POLICY_NAME = RateLimiter.WARM_UP_POLICY_PREFIX + "-refused";

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");
    private static final Policy POLICY = Policy.of(POLICY_NAME, Limit.of(1_000_000, Rate.perSecond(1_000_000)));
    private static final Policy REFUSING = Policy.of(REFUSING_POLICY_NAME, Limit.of(1, Rate.perSecond(1_000)));
    private static final int CHECKS = 5_000;
    private static final int CHECKS_IN_FLIGHT = 32;
    private static final int HTTP_REQUESTS = 1_000;

    /** The least time the Envoy policies' priming gets, even past {@link #LIMIT}. */
    static final Duration PRIMING_FLOOR = Duration.ofSeconds(5);

    /** The least time the wait for what the priming compiled gets, even past {@link #LIMIT}. */
    static final Duration COMPILATION_FLOOR = Duration.ofSeconds(2);

    /** How long the JIT must stay idle, compiling nothing, before the warm-up counts as done. */
    private static final long QUIET_MILLIS = 200;

    private WarmUp() {}

    /**
     * Warms up the paths of a server whose {@code /healthz} answers on {@code port} (the management port when
     * there is one, with {@code token} if it needs one, else null; 0 where no port serves it, and the loopback is
     * skipped); never throws, logs what it did.
     */
    static void run(
            RateLimiter limiter,
            RequestLimiter requests,
            ServerMetrics metrics,
            int port,
            String token,
            EnvoyService envoy,
            EnvoyService.Setup envoySetup) {
        long start = System.nanoTime();
        long deadline = start + LIMIT.toNanos();
        boolean store = requests.warmUp(LIMIT);
        // A proxy whose public port serves nothing of its own, without a management port, has no path to ask
        boolean warmHttp = port > 0;
        // Each path gets an equal share of the time left, so that a slow one cannot starve the next: two cold
        // servers on two busy cores spent all 20 s on the checks and the loopback, and then ran no Envoy call
        int phases = 1 + (warmHttp ? 1 : 0) + (envoy != null ? 1 : 0);
        int checks = checks(
                new CheckApi(
                        Map.of(POLICY_NAME, POLICY, REFUSING_POLICY_NAME, REFUSING),
                        Set.of(),
                        limiter,
                        requests,
                        metrics),
                share(deadline, phases--));
        int loopback = warmHttp ? httpRequests(port, token, share(deadline, phases--)) : 0;
        int envoyCalls = envoy != null ? envoy.warmUp(deadline) : 0;
        boolean compiled = awaitCompilation(deadline);
        // The warm-up filled the young generation: collect it now, so that the first real requests do not meet
        // a collection pause (20 to 50 ms on two busy cores, measured) that runs them out of the store's budget.
        System.gc();
        // Then what real calls do next: calls for each policy of the Envoy files, on keys no client uses. Without
        // them one cold start in ten still ran a decision of a first burst out of its budget; with them none did.
        // The priming runs even when the rest used up the time (two cold servers on two busy cores do, in 20 s): a
        // few calls per policy, and the first real calls' refusals are what else would run cold on the store's
        // I/O thread. So does the wait for what it compiled, briefly.
        int primed = envoy == null
                ? 0
                : envoy.primePolicies(envoySetup, Math.max(deadline, System.nanoTime() + PRIMING_FLOOR.toNanos()));
        if (primed > 0) {
            compiled = awaitCompilation(Math.max(deadline, System.nanoTime() + COMPILATION_FLOOR.toNanos()));
        }
        // The warm-up ran every path real requests run, meters included: now it leaves no trace in them
        metrics.forgetWarmUp();
        LOG.log(
                Level.INFO,
                "tollgate warmed up in {0} ms: store {1}, {2} decision API checks, {3} HTTP requests{4}, {5}",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                store ? "ready" : "not reached (deciding by the failure policy until it answers)",
                checks,
                loopback,
                envoy == null ? "" : ", " + (envoyCalls + primed) + " Envoy rate limit calls",
                compiled ? "compiled" : "still compiling");
    }

    /**
     * Logs that the server says it is ready without warming up ({@code server.warm-up: false}): what its first
     * requests will pay for instead.
     */
    static void skipped() {
        LOG.log(
                Level.INFO,
                "tollgate skipped its warm-up (server.warm-up: false): its first requests pay for loading classes and"
                        + " compiling code, and on Redis may outlast the time budget");
    }

    /** The deadline of the next of {@code phases} paths to warm up: its share of the time left until {@code deadline}. */
    private static long share(long deadline, int phases) {
        long now = System.nanoTime();
        return now + Math.max(0, deadline - now) / Math.max(1, phases);
    }

    /**
     * Waits until the JIT has compiled what the warm-up ran: until it has spent no time compiling for
     * {@value #QUIET_MILLIS} ms. Returns false if the deadline came first, or the JVM does not say.
     */
    private static boolean awaitCompilation(long deadline) {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return false;
        }
        long last = jit.getTotalCompilationTime();
        while (System.nanoTime() < deadline) {
            try {
                TimeUnit.MILLISECONDS.sleep(QUIET_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            long now = jit.getTotalCompilationTime();
            if (now == last) {
                return true;
            }
            last = now;
        }
        return false;
    }

    private static int checks(CheckApi api, long deadline) {
        byte[][] bodies = new byte[CHECKS_IN_FLIGHT][];
        for (int i = 0; i < bodies.length; i++) {
            // Allowed and refused (rendered as 429), one by one and in batches, on a few keys.
            String check = "\"policy\":\"" + (i % 2 == 0 ? POLICY_NAME : REFUSING_POLICY_NAME) + "\",\"key\":\""
                    + WarmUpKeys.key(i % 8) + "\"";
            bodies[i] = (i % 4 == 3 ? "{\"checks\":[{" + check + "}]}" : "{" + check + ",\"cost\":1}")
                    .getBytes(StandardCharsets.UTF_8);
        }
        int done = 0;
        while (done < CHECKS && System.nanoTime() < deadline) {
            List<CompletableFuture<CheckApi.Answer>> wave = new ArrayList<>(bodies.length);
            for (byte[] body : bodies) {
                wave.add(api.answer(body));
            }
            try {
                CompletableFuture.allOf(wave.toArray(CompletableFuture[]::new))
                        .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                return done;
            }
            done += bodies.length;
        }
        return done;
    }

    /** Sends {@code GET /healthz} over one kept-alive loopback connection; returns how many were answered. */
    private static int httpRequests(int port, String token, long deadline) {
        String authorization = token == null ? "" : "Authorization: Bearer " + token + "\r\n";
        byte[] request = ("GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + authorization + "\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        int answered = 0;
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            while (answered < HTTP_REQUESTS && System.nanoTime() < deadline) {
                out.write(request);
                out.flush();
                readResponse(in);
                answered++;
            }
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "tollgate warm-up: loopback request failed", e);
        }
        return answered;
    }

    /** Reads one response with a Content-Length body. */
    private static void readResponse(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed");
            }
            head.append((char) b);
        }
        long length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                length = Long.parseLong(line.substring(15).trim());
            }
        }
        in.skipNBytes(length);
    }
}
