package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.tollgate.InMemoryRateLimiter;
import io.tollgate.LimiterArguments;
import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import io.tollgate.fixtures.PathReference;
import io.tollgate.http.HttpRequestView;
import io.tollgate.http.PathSettings;
import io.tollgate.server.internal.envoy.EnvoyRequests;
import io.tollgate.top.KeyDisplay;
import io.tollgate.top.TopKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the server reads from outside, fed whatever a hostile client sends, each through the code that reads it
 * in production: raw bytes to the public and management ports (Netty's HTTP codec, then the server's exchanges:
 * the decision API's JSON, the admin API's percent-encoded paths and parameters, the 413s and 431s), the
 * forward-auth headers, {@code X-Forwarded-For} and {@code Forwarded}, Envoy's {@code ShouldRateLimit} request
 * bytes, the key rule, and a server's or rules file. Each target says what may never happen: a 5xx answer, an
 * exception other than the parser's own refusal, or a key past its bound. For the fuzz tests ({@link
 * HostileInputFuzzTest}); one instance serves every input, as one server serves every client.
 */
final class HostileInput {

    private static final Pattern STATUS_LINE = Pattern.compile("HTTP/1\\.[01] (\\d{3}) ");

    private final Endpoints publicPort;
    private final Endpoints managementPort;
    private final Limits limits;
    private final EnvoyRequests envoy;
    private final AtomicInteger inFlight = new AtomicInteger();

    HostileInput() {
        ServerConfig config = ServerConfig.parse("""
                server:
                  forward-auth: true
                  expose-metrics-publicly: true
                top-keys:
                  enabled: true
                client-ip:
                  trusted-proxies: [127.0.0.1, "::1"]
                policies:
                  per-client:
                    limits:
                      - capacity: 5
                        refill: 1/s
                  layered:
                    max-debt: 0s
                    limits:
                      - capacity: 3
                        refill: 1/s
                      - capacity: 100
                        refill: 100/h
                rules:
                  - path: /api/**
                    key: header:X-API-Key+ip
                    on-missing-key: fallback:ip
                    policy: per-client
                  - path: /**
                    key: ip
                    policy: layered
                """, "hostile.yaml");
        ServerMetrics metrics = new ServerMetrics();
        RateLimiter limiter = InMemoryRateLimiter.create();
        limits = Limits.of(config, limiter, metrics, null);
        AtomicReference<Limits> current = new AtomicReference<>(limits);
        Readiness readiness = new Readiness(StoreMonitor.memory());
        readiness.ready();
        publicPort = Endpoints.publicPort(
                current::get, readiness, metrics, config.listeners().exposure(), Runnable::run, null);
        AdminApi admin = new AdminApi(
                () -> current.get().config(),
                limiter,
                "memory",
                new ConfigReloader(current, limiter, metrics),
                TopKeys.count(limiter, TimeSource.system(), 64, summaries -> null),
                KeyDisplay.MASKED,
                new LiveViews(MeterHistory.sampling(metrics.registry()), StoreMonitor.memory(), "memory"));
        managementPort = Endpoints.managementPort(readiness, metrics, Runnable::run, admin, null);
        try {
            Path dir = Files.createTempDirectory("tollgate-hostile");
            Path file = Files.writeString(dir.resolve("edge.yaml"), """
                    domain: edge
                    descriptors:
                      - key: remote_address
                        rate_limit: {unit: second, requests_per_unit: 5}
                      - key: user
                        tollgate_policy: per-client
                        descriptors:
                          - key: path
                            value: "/api*"
                            rate_limit: {unit: minute, requests_per_unit: 10}
                      - key: generic_key
                        value: shadowed
                        shadow_mode: true
                        detailed_metric: true
                        rate_limit: {unit: hour, requests_per_unit: 1}
                    """);
            envoy = new EnvoyRequests(file, config.policies());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Returns this server's configuration, for the targets that read one. */
    Limits limits() {
        return limits;
    }

    /**
     * Sends {@code bytes} to a port as a connection would, in the pieces the fuzzer chose, and checks every answer
     * written back: no 5xx, no exception out of the pipeline.
     */
    void toPort(boolean management, List<byte[]> pieces) {
        Endpoints endpoints = management ? managementPort : publicPort;
        EmbeddedChannel channel = new EmbeddedChannel(new HttpServerCodec(new HttpDecoderConfig()
                .setMaxInitialLineLength(DataPlane.MAX_REQUEST_LINE_BYTES)
                .setMaxHeaderSize(DataPlane.MAX_HEADER_BYTES)));
        channel.pipeline().addLast(Exchanges.pipeline(endpoints, inFlight, () -> false));
        try {
            for (byte[] piece : pieces) {
                if (!channel.isActive()) {
                    break;
                }
                channel.writeInbound(Unpooled.wrappedBuffer(piece));
                channel.runPendingTasks();
            }
            channel.advanceTimeBy(CheckApi.LINGER_MAX_SECONDS + 1, TimeUnit.SECONDS);
            channel.runPendingTasks();
            channel.checkException();
            StringBuilder written = new StringBuilder();
            for (Object out; (out = channel.readOutbound()) != null; ) {
                ByteBuf bytes = (ByteBuf) out;
                written.append(bytes.toString(StandardCharsets.ISO_8859_1));
                bytes.release();
            }
            Matcher status = STATUS_LINE.matcher(written);
            while (status.find()) {
                int code = Integer.parseInt(status.group(1));
                if (code != 100) {
                    assertThat(code).as("an answer's status, of %s", written).isLessThan(500);
                }
            }
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** Asks forward-auth about a request the fuzzer describes in the header fields nginx and Caddy send. */
    void forwardAuth(FuzzedDataProvider data) throws Exception {
        HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, ForwardAuth.PATH);
        String[] names = {
            "X-Original-Method",
            "X-Original-URI",
            "X-Forwarded-Method",
            "X-Forwarded-Uri",
            "X-Forwarded-Host",
            "X-Forwarded-For",
            "Forwarded",
            "Host",
            "X-API-Key"
        };
        int fields = data.consumeInt(0, 12);
        for (int i = 0; i < fields; i++) {
            try {
                request.headers().add(data.pickValue(names), data.consumeString(200));
            } catch (IllegalArgumentException notAFieldValue) {
                // Netty's codec would not have read such a field either
            }
        }
        CheckApi.Answer answer = ForwardAuth.answer(request, new InetSocketAddress("127.0.0.1", 40_000), limits)
                .toCompletableFuture()
                .get(5, TimeUnit.SECONDS);
        assertThat(answer.status()).as("forward-auth's answer").isLessThan(500);
    }

    /**
     * Reads a request target the fuzzer writes (pieces of hostile paths and characters of its own) as the proxy
     * reads it, and asks forward-auth about it: both refuse it exactly where {@link PathReference} does, and
     * otherwise the path forwarded, read again by the reference, is the path the rules matched.
     */
    void path(FuzzedDataProvider data) throws Exception {
        StringBuilder target = new StringBuilder("/");
        while (data.remainingBytes() > 0 && target.length() < 300) {
            target.append(
                    data.consumeBoolean()
                            ? data.pickValue(PathReference.PIECES)
                            : data.consumeString(3).replace('?', '/'));
        }
        String path = target.toString();
        PathReference.Read expected = PathReference.read(path);
        NettyRequestView view = null;
        try {
            view = NettyRequestView.of(
                    new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path),
                    new InetSocketAddress("127.0.0.1", 40_000),
                    PathSettings.DEFAULT);
        } catch (IllegalArgumentException refused) {
            assertThat(expected)
                    .as("the reference's reading of %s, which the proxy refused", path)
                    .isNull();
        }
        if (view != null) {
            assertThat(expected).as("the reference's reading of %s", path).isNotNull();
            assertThat(view.forwardedPath())
                    .as("what the proxy forwards of %s", path)
                    .isEqualTo(expected.forwarded());
            assertThat(view.path()).as("what the rules match of %s", path).isEqualTo(expected.matched());
            assertThat(PathReference.read(view.forwardedPath()))
                    .as("the forwarded form of %s, read again", path)
                    .isEqualTo(expected);
        }
        if (path.chars().allMatch(c -> c >= ' ' && c < 0x7f)) { // a header field's value holds no other
            HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, ForwardAuth.PATH);
            request.headers().set("X-Original-Method", "GET").set("X-Original-URI", path.strip());
            int status = ForwardAuth.answer(request, new InetSocketAddress("127.0.0.1", 40_000), limits)
                    .toCompletableFuture()
                    .get(5, TimeUnit.SECONDS)
                    .status();
            assertThat(status == 400)
                    .as("forward-auth refused %s (answered %d)", path, status)
                    .isEqualTo(PathReference.read(path.strip()) == null);
        }
    }

    /** Reads a client's IP from the forwarding header fields a proxy wrote, as the rules do. */
    void clientIp(FuzzedDataProvider data) {
        List<String> forwardedFor = List.of(data.consumeString(300), data.consumeString(300));
        String forwarded = data.consumeString(300);
        String peer = data.pickValue(new String[] {"127.0.0.1", "::1", "10.0.0.1", data.consumeString(40)});
        HttpRequestView view = new FuzzedView(peer, forwardedFor, forwarded);
        String ip = limits.config().clientIps().clientIp(view);
        // As ClientIpResolver.clientIp says: an address for every request with a peer address, none without
        if (peer.isEmpty()) {
            assertThat(ip)
                    .as("the client IP of a request without a peer address")
                    .isNull();
        } else {
            assertThat(ip).as("the client IP of a request from %s", peer).isNotNull();
        }
    }

    /** Decides raw {@code ShouldRateLimit} bytes; a refusal of bytes that are no valid request is the parser's own. */
    void envoy(byte[] bytes) throws Exception {
        envoy.decide(bytes);
    }

    /** The key rule: at most its bound, the key itself up to it, a digest past it. */
    static void boundedKey(String key) {
        String bounded = LimiterArguments.boundedKey(key);
        assertThat(bounded.length()).isLessThanOrEqualTo(LimiterArguments.MAX_KEY_LENGTH);
        if (key.length() <= LimiterArguments.MAX_KEY_LENGTH) {
            assertThat(bounded).isEqualTo(key);
        } else {
            assertThat(bounded).startsWith("sha256:");
        }
    }

    /** Reads a server's file: refused with an {@link IllegalArgumentException} naming the problem, or read. */
    static void serverFile(String text) {
        try {
            ServerConfig.parse(text, "fuzzed.yaml");
        } catch (IllegalArgumentException refused) {
            assertThat(refused.getMessage()).startsWith("fuzzed.yaml");
        }
    }

    /** A request whose forwarding header fields are what the fuzzer chose. */
    private record FuzzedView(String peer, List<String> forwardedFor, String forwarded) implements HttpRequestView {

        @Override
        public String method() {
            return "GET";
        }

        @Override
        public String path() {
            return "/";
        }

        @Override
        public String host() {
            return "localhost";
        }

        @Override
        public List<String> headers(String name) {
            if (name.equalsIgnoreCase("X-Forwarded-For")) {
                return forwardedFor;
            }
            if (name.equalsIgnoreCase("Forwarded")) {
                return List.of(forwarded);
            }
            return List.of();
        }

        @Override
        public String queryParameter(String name) {
            return null;
        }

        @Override
        public String remoteAddress() {
            return peer;
        }

        @Override
        public String principal() {
            return null;
        }
    }

    /** Splits the rest of the fuzzer's bytes into a connection's pieces, at the places it chose. */
    static List<byte[]> pieces(FuzzedDataProvider data) {
        int cuts = data.consumeInt(0, 4);
        List<byte[]> pieces = new ArrayList<>();
        for (int i = 0; i < cuts; i++) {
            pieces.add(data.consumeBytes(data.consumeInt(1, 2_000)));
        }
        pieces.add(data.consumeRemainingAsBytes());
        return pieces;
    }

    /**
     * The targets by the number {@link HostileInputFuzzTest#everything} picks them by: the last byte of an input
     * of its corpus.
     */
    static final Map<String, Integer> TARGETS = Map.of(
            "public-port", 0,
            "management-port", 1,
            "decision-api", 2,
            "forward-auth", 3,
            "client-ip", 4,
            "envoy", 5,
            "key", 6,
            "server-file", 7,
            "path", 8);
}
