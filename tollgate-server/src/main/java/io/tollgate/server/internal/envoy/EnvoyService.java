package io.tollgate.server.internal.envoy;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.tollgate.RateLimiter;
import io.tollgate.server.internal.envoy.proto.RateLimitRequest;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Envoy's rate limit service, {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit}, over
 * gRPC on a port of its own, with the standard gRPC health service ({@code grpc.health.v1.Health}) for the
 * server as a whole and for the rate limit service by name. Each call is decided under the {@link Setup} the
 * supplier gives at that moment, so that a reload takes effect at the next call; the buckets live in the
 * limiter, which the server shares with its other surfaces.
 *
 * <p>Thread-safe.
 */
public final class EnvoyService implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /**
     * What decides a call.
     *
     * @param limits the rate limits, in envoyproxy/ratelimit's format
     * @param xRateLimitHeaders whether answers also carry {@code X-RateLimit-Limit}, {@code -Remaining} and
     *     {@code -Reset}
     * @param shadowMode whether every call is answered {@code OK}, what its descriptors would refuse only counted
     *     (envoyproxy/ratelimit's global shadow mode)
     */
    public record Setup(EnvoyRateLimits limits, boolean xRateLimitHeaders, boolean shadowMode) {

        /** @throws NullPointerException if limits is null */
        public Setup {
            Objects.requireNonNull(limits, "limits");
        }

        /** A setup that enforces what it decides: no global shadow mode. */
        public Setup(EnvoyRateLimits limits, boolean xRateLimitHeaders) {
            this(limits, xRateLimitHeaders, false);
        }
    }

    private final Server server;
    private final HealthStatusManager health;
    private final Calls calls;

    /**
     * Starts listening on {@code host}:{@code port} (0 for a free port) and returns once it accepts calls;
     * the health service answers {@code NOT_SERVING} until {@link #serving} says otherwise.
     *
     * @param registry where its metrics go ({@code tollgate.envoy.decisions})
     * @throws IOException if it cannot listen, such as when the port is taken
     */
    public static EnvoyService start(
            String host, int port, RateLimiter limiter, MeterRegistry registry, Supplier<Setup> setup)
            throws IOException {
        EnvoyMetrics metrics = new EnvoyMetrics(registry);
        metrics.warmUp();
        RateLimitDecisions decisions = new RateLimitDecisions(limiter, metrics);
        Calls calls = new Calls(decisions, setup);
        HealthStatusManager health = new HealthStatusManager();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                // Calls are decided on Netty's event loop: a decision never blocks (the limiter answers
                // asynchronously), so handing each call to another thread would only add a hop.
                .directExecutor()
                .addService(calls)
                .addService(health.getHealthService())
                .build();
        EnvoyService service = new EnvoyService(server, health, calls);
        service.serving(false);
        server.start();
        return service;
    }

    private EnvoyService(Server server, HealthStatusManager health, Calls calls) {
        this.server = server;
        this.health = health;
        this.calls = calls;
    }

    /**
     * Runs {@code ShouldRateLimit} calls over the loopback to this service until its path is compiled or {@code
     * deadlineNanos} (of {@link System#nanoTime()}) comes, so that the first real calls do not run out of the
     * store's time budget; the calls name domains of their own, answered only meanwhile, on policies no client
     * uses. Returns how many were answered; never throws.
     */
    public int warmUp(long deadlineNanos) {
        calls.warmUp = EnvoyWarmUp.setups();
        try {
            return EnvoyWarmUp.run(address(), deadlineNanos);
        } finally {
            calls.warmUp = Map.of();
        }
    }

    /**
     * Runs a few {@code ShouldRateLimit} calls for each policy that the descriptors of {@code setup} follow, on a
     * key no client uses, over the loopback, one at a time, until done or {@code deadlineNanos}: the first calls
     * for a policy make what it needs, and the last thing a warm-up does should be what real calls do next. Their
     * decisions are counted under the policies' names in the limiter's metrics, not in the Envoy ones. Returns how
     * many were answered; never throws.
     */
    public int primePolicies(Setup setup, long deadlineNanos) {
        Map<String, Setup> priming = EnvoyWarmUp.primingSetup(setup.limits());
        if (priming.isEmpty()) {
            return 0;
        }
        calls.warmUp = priming;
        try {
            return EnvoyWarmUp.prime(address(), setup.limits().policies(), deadlineNanos);
        } finally {
            calls.warmUp = Map.of();
        }
    }

    private InetSocketAddress address() {
        return (InetSocketAddress) server.getListenSockets().get(0);
    }

    /** Returns the port it listens on: the configured one, or the one picked for port 0. */
    public int port() {
        return server.getPort();
    }

    /** Says whether it serves: what the gRPC health service answers, for the server and for this service. */
    public void serving(boolean serving) {
        ServingStatus status = serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
        health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, status);
        health.setStatus(RateLimitServiceGrpc.SERVICE_NAME, status);
    }

    /**
     * Stops gracefully: answers {@code NOT_SERVING} to health checks, stops accepting calls, lets calls in
     * flight finish for up to {@code timeout}, then cuts the rest. Safe to call more than once.
     */
    public void stop(Duration timeout) {
        health.enterTerminalState();
        server.shutdown();
        try {
            if (!server.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
    }

    /** Stops at once, as {@link #stop} with no time for calls in flight. */
    @Override
    public void close() {
        stop(Duration.ZERO);
    }

    /** The gRPC service: every call decided, every failure a status with a message, never a stack trace. */
    private static final class Calls extends RateLimitServiceGrpc.RateLimitServiceImplBase {

        private final RateLimitDecisions decisions;
        private final Supplier<Setup> setup;
        /** What the warm-up's domains are answered with while it runs; empty otherwise. */
        private volatile Map<String, Setup> warmUp = Map.of();

        Calls(RateLimitDecisions decisions, Supplier<Setup> setup) {
            this.decisions = decisions;
            this.setup = setup;
        }

        @Override
        public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> answer) {
            try {
                Setup warming = warmUp.get(request.getDomain());
                decisions
                        .decide(request, warming != null ? warming : setup.get())
                        .whenComplete((response, failure) -> {
                            if (failure == null) {
                                answer.onNext(response);
                                answer.onCompleted();
                            } else {
                                failed(answer, failure);
                            }
                        });
            } catch (RateLimitDecisions.InvalidRequest e) {
                answer.onError(
                        Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            } catch (RuntimeException e) {
                failed(answer, e);
            }
        }

        private static void failed(StreamObserver<RateLimitResponse> answer, Throwable failure) {
            LOG.log(Level.ERROR, "deciding an Envoy rate limit request failed", failure);
            answer.onError(Status.INTERNAL
                    .withDescription("the rate limiter failed; see the server's log")
                    .asRuntimeException());
        }
    }
}
