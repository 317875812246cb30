package io.tollgate.server.internal.envoy;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tollgate.Limit;
import io.tollgate.Policy;
import io.tollgate.Rate;
import io.tollgate.RateLimiter;
import io.tollgate.WarmUpKeys;
import io.tollgate.server.internal.envoy.proto.RateLimitDescriptor;
import io.tollgate.server.internal.envoy.proto.RateLimitRequest;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The calls that warm up Envoy's rate limit service before the server says it serves: {@code ShouldRateLimit}
 * over the loopback to the service's own port, through gRPC's parsing, the matching of descriptors, the
 * limiter, the rendering of header fields, the refund of an all-or-nothing refusal and gRPC's writing, so that
 * the first real calls pay for no class loading or compilation. Without it the first answers, completed on the
 * store's I/O thread, load and compile that path there, and every decision that thread completes next runs out
 * of its budget.
 *
 * <p>The calls name domains of their own, that the service answers only while it warms up, and that start with
 * {@link WarmUpKeys#PREFIX}, as do the keys of their buckets: the Envoy meters leave these domains out, and
 * what the limiter's meters recorded of them is removed at the end of the warm-up.
 */
final class EnvoyWarmUp {

    /** The domain of the warm-up's calls, answered without the {@code X-RateLimit} header fields. */
    static final String DOMAIN = WarmUpKeys.key("envoy");

    /** The domain of the warm-up's calls, answered with the {@code X-RateLimit} header fields. */
    static final String DOMAIN_WITH_HEADERS = WarmUpKeys.key("envoy-x-ratelimit");

    /**
     * The domain of the calls that prime each policy the configuration's descriptors follow, on a key no client
     * uses, so that the first real calls for a policy find everything it needs made (its rule, its buckets'
     * arguments) and the freshly collected heap in use.
     */
    static final String POLICIES_DOMAIN = WarmUpKeys.key("envoy-policies");

    /** The most policies primed: a file of more pays for the rest on their first calls. */
    static final int MAX_PRIMED_POLICIES = 256;

    private static final int CALLS_PER_POLICY = 20;
    private static final int REFUSED_CALLS_PER_POLICY = 3;

    /**
     * Enough calls for the JIT's top tier to compile the path of a call: a method without loops reaches C2 after
     * about 5 000 to 15 000 calls (HotSpot's Tier4 thresholds); below that it runs C1's profiling code, several
     * times slower, which a first burst on two busy cores ran out of its budget with, one run in ten.
     */
    private static final int CALLS = 16_000;

    private static final int IN_FLIGHT = 32;
    private static final java.time.Duration CALL_GRACE = java.time.Duration.ofSeconds(5);
    private static final int KEYS = 8;
    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    private static final Policy PASSING =
            Policy.of(RateLimiter.WARM_UP_POLICY_PREFIX + "-envoy", Limit.of(1_000_000, Rate.perSecond(1_000_000)));
    private static final Policy REFUSING =
            Policy.of(RateLimiter.WARM_UP_POLICY_PREFIX + "-envoy-refused", Limit.of(1, Rate.perSecond(1_000)));

    private EnvoyWarmUp() {}

    /**
     * What the service answers the warm-up's domains with: descriptors that allow (one naming a policy, one with
     * a {@code rate_limit} of its own), and one that mostly refuses.
     */
    static Map<String, EnvoyService.Setup> setups() {
        Map<String, Policy> policies = Map.of(PASSING.name(), PASSING, REFUSING.name(), REFUSING);
        String file = """
                domain: %s
                descriptors:
                  - key: allowed
                    tollgate_policy: %s
                  - key: refused
                    tollgate_policy: %s
                  - key: limited
                    rate_limit:
                      unit: second
                      requests_per_unit: 1000000
                """;
        return Map.of(
                DOMAIN,
                new EnvoyService.Setup(
                        EnvoyRateLimits.parse(
                                file.formatted(DOMAIN, PASSING.name(), REFUSING.name()), "warm-up", policies),
                        false),
                DOMAIN_WITH_HEADERS,
                new EnvoyService.Setup(
                        EnvoyRateLimits.parse(
                                file.formatted(DOMAIN_WITH_HEADERS, PASSING.name(), REFUSING.name()),
                                "warm-up",
                                policies),
                        true));
    }

    /**
     * What the service answers {@link #POLICIES_DOMAIN} with: a descriptor {@code p0}, {@code p1}, ... naming
     * each policy of {@code limits}, at most {@value #MAX_PRIMED_POLICIES}.
     */
    static Map<String, EnvoyService.Setup> primingSetup(EnvoyRateLimits limits) {
        List<Policy> policies = limits.policies();
        Map<String, Policy> byName = new java.util.LinkedHashMap<>();
        StringBuilder file = new StringBuilder("domain: " + POLICIES_DOMAIN + "\ndescriptors:\n");
        for (int i = 0; i < Math.min(policies.size(), MAX_PRIMED_POLICIES); i++) {
            Policy policy = policies.get(i);
            byName.put(policy.name(), policy);
            file.append("  - key: p")
                    .append(i)
                    .append("\n    tollgate_policy: ")
                    .append(policy.name())
                    .append('\n');
        }
        if (byName.isEmpty()) {
            return Map.of();
        }
        return Map.of(
                POLICIES_DOMAIN,
                new EnvoyService.Setup(EnvoyRateLimits.parse(file.toString(), "warm-up", byName), false));
    }

    /**
     * Decides, for each policy of the {@link #primingSetup}, one at a time on a key of their own over the
     * loopback, {@value #CALLS_PER_POLICY} calls, then one that takes every token left and {@value
     * #REFUSED_CALLS_PER_POLICY} that are refused; returns how many were answered. Never throws.
     */
    static int prime(
            InetSocketAddress address, X509Certificate certificate, List<Policy> policies, long deadlineNanos) {
        String key = WarmUpKeys.key(UUID.randomUUID());
        List<RateLimitRequest> requests = new ArrayList<>();
        for (int i = 0; i < Math.min(policies.size(), MAX_PRIMED_POLICIES); i++) {
            RateLimitRequest request = RateLimitRequest.newBuilder()
                    .setDomain(POLICIES_DOMAIN)
                    .addDescriptors(descriptor("p" + i, key))
                    .build();
            for (int call = 0; call < CALLS_PER_POLICY; call++) {
                requests.add(request);
            }
            // Then empty the bucket and be refused, as a first burst is: the refusal of this policy (its
            // unit, its retry-after, the deny cache) is answered on the store's I/O thread, where a path
            // run for the first time would hold up every answer behind it
            requests.add(request.toBuilder()
                    .setHitsAddend(
                            (int) Math.min(Integer.MAX_VALUE, policies.get(i).maxCost()))
                    .build());
            for (int call = 0; call < REFUSED_CALLS_PER_POLICY; call++) {
                requests.add(request);
            }
        }
        ManagedChannel channel = channel(address, certificate);
        int answered = 0;
        try {
            RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = RateLimitServiceGrpc.newBlockingStub(channel);
            for (RateLimitRequest request : requests) {
                if (System.nanoTime() >= deadlineNanos) {
                    break;
                }
                stub.withDeadlineAfter(callDeadline(deadlineNanos), TimeUnit.NANOSECONDS)
                        .shouldRateLimit(request);
                answered++;
            }
            return answered;
        } catch (RuntimeException e) {
            return System.nanoTime() >= deadlineNanos ? answered : answered + failed(e);
        } finally {
            channel.shutdownNow();
        }
    }

    /**
     * How long a call may take, in nanoseconds: until the warm-up's deadline and a grace after it. No wave starts
     * after the deadline; one in flight then finishes rather than being cut, which the server would log as a
     * stream error for each call.
     */
    private static long callDeadline(long deadlineNanos) {
        return Math.max(0, deadlineNanos - System.nanoTime()) + CALL_GRACE.toNanos();
    }

    /** Whether {@code domain} is one of the warm-up's, whose decisions the Envoy metrics leave out. */
    static boolean isWarmUp(String domain) {
        return domain.equals(DOMAIN) || domain.equals(DOMAIN_WITH_HEADERS) || domain.equals(POLICIES_DOMAIN);
    }

    /** Logs a warm-up call that failed (the server starts all the same); returns 0, the calls it counts. */
    private static int failed(Exception e) {
        LOG.log(Level.WARNING, "tollgate warm-up: an Envoy rate limit call failed: " + e.getMessage());
        LOG.log(Level.DEBUG, "tollgate warm-up: the Envoy rate limit call that failed", e);
        return 0;
    }

    /**
     * A channel to the service at {@code address}: in plain text, or over TLS trusting exactly {@code
     * certificate}, the service's own (whatever names it holds: this is the loopback to itself).
     */
    private static ManagedChannel channel(InetSocketAddress address, X509Certificate certificate) {
        InetAddress host = address.getAddress();
        String target = host == null || host.isAnyLocalAddress()
                ? InetAddress.getLoopbackAddress().getHostAddress()
                : host.getHostAddress();
        NettyChannelBuilder builder = NettyChannelBuilder.forAddress(target, address.getPort());
        if (certificate == null) {
            return builder.usePlaintext().build();
        }
        try {
            return builder.sslContext(GrpcSslContexts.forClient()
                            .trustManager(new OwnCertificate(certificate))
                            .build())
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("the warm-up's TLS context", e);
        }
    }

    /** Trusts exactly the service's own certificate, by name or not: the warm-up calls itself over the loopback. */
    private static final class OwnCertificate extends X509ExtendedTrustManager {
        private final X509Certificate own;

        OwnCertificate(X509Certificate own) {
            this.own = own;
        }

        private void check(X509Certificate[] chain) throws CertificateException {
            if (chain.length == 0 || !chain[0].equals(own)) {
                throw new CertificateException("not this server's own certificate");
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            check(chain);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            throw new CertificateException("a client's trust manager checks servers only");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            throw new CertificateException("a client's trust manager checks servers only");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("a client's trust manager checks servers only");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[] {own};
        }
    }

    /**
     * Calls the service listening at {@code address} in waves until done or {@code deadlineNanos} (of {@link
     * System#nanoTime()}); returns how many calls were answered. Never throws.
     */
    static int run(InetSocketAddress address, X509Certificate certificate, long deadlineNanos) {
        ManagedChannel channel = channel(address, certificate);
        int answered = 0;
        try {
            RateLimitServiceGrpc.RateLimitServiceFutureStub stub = RateLimitServiceGrpc.newFutureStub(channel);
            List<RateLimitRequest> requests = requests();
            while (answered < CALLS && System.nanoTime() < deadlineNanos) {
                List<ListenableFuture<RateLimitResponse>> wave = new ArrayList<>(requests.size());
                for (RateLimitRequest request : requests) {
                    wave.add(stub.withDeadlineAfter(callDeadline(deadlineNanos), TimeUnit.NANOSECONDS)
                            .shouldRateLimit(request));
                }
                for (ListenableFuture<RateLimitResponse> call : wave) {
                    call.get();
                    answered++;
                }
            }
            return answered;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return answered;
        } catch (Exception e) {
            // A wave in flight when the warm-up's time ran out ends in DEADLINE_EXCEEDED: the calls answered count
            return System.nanoTime() >= deadlineNanos ? answered : answered + failed(e);
        } finally {
            channel.shutdownNow();
        }
    }

    /**
     * Allowed (by a policy of the server's and by a {@code rate_limit} of the file's form), refused, and refused
     * with another descriptor's tokens given back; with and without X-RateLimit.
     */
    private static List<RateLimitRequest> requests() {
        String prefix = WarmUpKeys.key(UUID.randomUUID() + "-");
        List<RateLimitRequest> requests = new ArrayList<>(IN_FLIGHT);
        for (int i = 0; i < IN_FLIGHT; i++) {
            String key = prefix + i % KEYS;
            RateLimitRequest.Builder request =
                    RateLimitRequest.newBuilder().setDomain(i % 2 == 0 ? DOMAIN : DOMAIN_WITH_HEADERS);
            switch (i % 4) {
                case 0, 1 -> request.addDescriptors(descriptor("allowed", key));
                case 2 -> request.addDescriptors(descriptor("refused", key));
                default ->
                    request.addDescriptors(descriptor("allowed", key)).addDescriptors(descriptor("refused", key));
            }
            requests.add(request.build());
        }
        return requests;
    }

    private static RateLimitDescriptor descriptor(String key, String value) {
        return RateLimitDescriptor.newBuilder()
                .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(key).setValue(value))
                .build();
    }
}
