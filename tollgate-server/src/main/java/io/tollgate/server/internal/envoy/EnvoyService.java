package io.tollgate.server.internal.envoy;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.tollgate.RateLimiter;
import io.tollgate.server.internal.access.CallerEvents;
import io.tollgate.server.internal.access.Callers;
import io.tollgate.server.internal.envoy.proto.RateLimitRequest;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import io.tollgate.server.internal.tls.TlsContexts;
import io.tollgate.server.internal.tls.TlsFiles;
import io.tollgate.server.internal.tls.TlsSettings;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Envoy's rate limit service, {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit}, and its rate
 * limit quota service ({@code StreamRateLimitQuotas}, {@link QuotaStreams}), over gRPC on a port of its own, with the standard gRPC health service ({@code grpc.health.v1.Health}) for the
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
     * @param quota how the rate limit quota service hands out quota, or null if it hands out none
     */
    public record Setup(EnvoyRateLimits limits, boolean xRateLimitHeaders, boolean shadowMode, QuotaSettings quota) {

        /** @throws NullPointerException if limits is null */
        public Setup {
            Objects.requireNonNull(limits, "limits");
        }

        /** A setup that enforces what it decides: no global shadow mode, and no quota service. */
        public Setup(EnvoyRateLimits limits, boolean xRateLimitHeaders) {
            this(limits, xRateLimitHeaders, false, null);
        }
    }

    private final Server server;
    private final HealthStatusManager health;
    private final Calls calls;
    private final QuotaStreams quota;
    /** The port's TLS files, or null for plain gRPC. */
    private final TlsFiles tls;

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
        return start(host, port, limiter, registry, setup, () -> Callers.NONE, new CallerEvents(registry), null);
    }

    /**
     * Starts as {@link #start(String, int, RateLimiter, MeterRegistry, Supplier)} does, serving only the callers
     * that {@code callers} names at the moment of each call where it names any: by the bearer token of the call's
     * {@code authorization} metadata, or its client certificate. A call that names none is answered {@code
     * UNAUTHENTICATED}, one whose descriptors match a limit its caller may not ask of {@code PERMISSION_DENIED};
     * both are counted in {@code events}. With {@code tls}, it serves gRPC over TLS (HTTP/2 by ALPN) with the
     * certificate those files hold at each handshake, and asks for client certificates as they say.
     *
     * @throws IOException if it cannot listen, such as when the port is taken
     */
    public static EnvoyService start(
            String host,
            int port,
            RateLimiter limiter,
            MeterRegistry registry,
            Supplier<Setup> setup,
            Supplier<Callers> callers,
            CallerEvents events,
            TlsFiles tls)
            throws IOException {
        EnvoyMetrics metrics = new EnvoyMetrics(registry);
        metrics.warmUp();
        RateLimitDecisions decisions = new RateLimitDecisions(limiter, metrics);
        Calls calls = new Calls(decisions, setup, callers, events);
        QuotaStreams quota = new QuotaStreams(limiter, setup, callers, events);
        HealthStatusManager health = new HealthStatusManager();
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(host, port));
        if (tls != null) {
            builder.sslContext(TlsContexts.grpc(tls));
        }
        Server server = builder
                // Calls are decided on Netty's event loop: a decision never blocks (the limiter answers
                // asynchronously), so handing each call to another thread would only add a hop.
                .directExecutor()
                .addService(ServerInterceptors.intercept(calls, new CallerMetadata()))
                .addService(ServerInterceptors.intercept(quota, new CallerMetadata()))
                .addService(health.getHealthService())
                .build();
        EnvoyService service = new EnvoyService(server, health, calls, quota, tls);
        service.serving(false);
        server.start();
        return service;
    }

    private EnvoyService(Server server, HealthStatusManager health, Calls calls, QuotaStreams quota, TlsFiles tls) {
        this.server = server;
        this.health = health;
        this.calls = calls;
        this.quota = quota;
        this.tls = tls;
    }

    /**
     * Whether the warm-up can call this service over the loopback: not where the port requires client
     * certificates, which the warm-up has none of.
     */
    private boolean loopbackPossible() {
        return tls == null || tls.settings().clientAuth() != TlsSettings.ClientAuth.REQUIRED;
    }

    /** The certificate the warm-up's loopback calls trust, the service's own; null for plain gRPC. */
    private X509Certificate loopbackCertificate() {
        return tls == null ? null : tls.certificate();
    }

    /**
     * Runs {@code ShouldRateLimit} calls over the loopback to this service until its path is compiled or {@code
     * deadlineNanos} (of {@link System#nanoTime()}) comes, so that the first real calls do not run out of the
     * store's time budget; the calls name domains of their own, answered only meanwhile, on policies no client
     * uses. Returns how many were answered; never throws.
     */
    public int warmUp(long deadlineNanos) {
        if (!loopbackPossible()) {
            LOG.log(
                    Level.INFO,
                    "tollgate warm-up: Envoy's port requires client certificates; its calls are not warmed");
            return 0;
        }
        calls.warmUp = EnvoyWarmUp.setups();
        try {
            return EnvoyWarmUp.run(address(), loopbackCertificate(), deadlineNanos);
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
        if (priming.isEmpty() || !loopbackPossible()) {
            return 0;
        }
        calls.warmUp = priming;
        try {
            return EnvoyWarmUp.prime(
                    address(), loopbackCertificate(), setup.limits().policies(), deadlineNanos);
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
        quota.close();
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
        private final Supplier<Callers> callers;
        private final CallerEvents events;
        /** What the warm-up's domains are answered with while it runs; empty otherwise. */
        private volatile Map<String, Setup> warmUp = Map.of();

        Calls(RateLimitDecisions decisions, Supplier<Setup> setup, Supplier<Callers> callers, CallerEvents events) {
            this.decisions = decisions;
            this.setup = setup;
            this.callers = callers;
            this.events = events;
        }

        @Override
        public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> answer) {
            Callers.Caller caller = null;
            try {
                Setup warming = warmUp.get(request.getDomain());
                Callers named = callers.get();
                // The warm-up's own calls, over the loopback, name domains of their own that only it answers
                if (warming == null && named.required()) {
                    caller = CallerMetadata.caller(named);
                    if (caller == null) {
                        String detail = CallerMetadata.unauthenticated("the rate limit service");
                        events.unauthenticated("envoy", detail);
                        answer.onError(
                                Status.UNAUTHENTICATED.withDescription(detail).asRuntimeException());
                        return;
                    }
                }
                Callers.Caller served = caller;
                decisions
                        .decide(request, warming != null ? warming : setup.get(), caller)
                        .whenComplete((response, failure) -> {
                            if (failure == null) {
                                if (served != null) {
                                    events.served(served, "envoy");
                                }
                                answer.onNext(response);
                                answer.onCompleted();
                            } else {
                                failed(answer, failure);
                            }
                        });
            } catch (RateLimitDecisions.InvalidRequest e) {
                answer.onError(
                        Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            } catch (RateLimitDecisions.Forbidden e) {
                events.forbidden(caller, "envoy", e.getMessage());
                answer.onError(
                        Status.PERMISSION_DENIED.withDescription(e.getMessage()).asRuntimeException());
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
