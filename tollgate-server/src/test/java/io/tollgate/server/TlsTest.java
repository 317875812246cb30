package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tollgate.server.internal.envoy.proto.RateLimitResponse.Code;
import io.tollgate.server.internal.envoy.proto.RateLimitServiceGrpc;
import io.tollgate.testing.RequiredBinary;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on the server's ports, with real clients: the JDK's, curl, openssl s_client and grpc-java. TLS 1.2 and 1.3
 * only, client certificates checked against the file's authorities and naming callers, and a certificate rotated
 * under load with no request failed.
 */
class TlsTest {

    private static final String POLICIES = """
            policies:
              per-user:
                limits:
                  - capacity: 100
                    refill: 100/s
            """;

    @TempDir
    Path dir;

    private TestCertificates.Authority authority;
    private TestCertificates.Pem server;
    private Path clientCa;
    private final List<RunningServer> servers = new ArrayList<>();

    @BeforeEach
    void certificates() throws Exception {
        authority = TestCertificates.authority("Tollgate Tests CA");
        server = authority.server().pem(dir, "server");
        clientCa = authority.pem(dir.resolve("ca.crt"));
    }

    @AfterEach
    void stop() {
        servers.forEach(RunningServer::close);
    }

    private RunningServer start(String yaml) throws Exception {
        RunningServer started = RunningServer.start(yaml);
        servers.add(started);
        return started;
    }

    private String tls(String section, String more) {
        return "  " + section + ":\n    certificate: " + server.certificate() + "\n    private-key: " + server.key()
                + "\n" + more;
    }

    private static HttpResponse<String> get(SSLContext tls, URI uri) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder()
                .sslContext(tls)
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        return client.send(
                HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void thePublicPortServesHttpsWithTheCertificateOfItsFiles() throws Exception {
        RunningServer https = start("server:\n" + tls("tls", "") + POLICIES);

        HttpResponse<String> health = get(
                authority.trustingContext(),
                URI.create("https://localhost:" + https.server().port() + "/healthz"));

        assertThat(https.server().uri().getScheme()).isEqualTo("https");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.sslSession().orElseThrow().getProtocol()).isEqualTo("TLSv1.3");
        assertThat(((X509Certificate) health.sslSession().orElseThrow().getPeerCertificates()[0])
                        .getSubjectX500Principal()
                        .getName())
                .isEqualTo("CN=localhost,O=Tollgate Tests");
    }

    @Test
    void onlyTls12And13AreSpokenAsOpensslFinds() throws Exception {
        Path openssl = RequiredBinary.find("openssl", "openssl");
        RunningServer https = start("server:\n" + tls("tls", "") + POLICIES);
        int port = https.server().port();

        assertThat(sClient(openssl, port, "-tls1_3")).contains("Protocol version: TLSv1.3", "Verification: OK");
        assertThat(sClient(openssl, port, "-tls1_2")).contains("Protocol version: TLSv1.2", "Verification: OK");
        assertThat(sClient(openssl, port, "-tls1_1"))
                .as("TLS 1.1 is refused")
                .doesNotContain("CONNECTION ESTABLISHED", "Protocol version: TLSv1.1")
                .containsPattern("(?i)alert|no protocols available|wrong version|handshake failure");
    }

    private String sClient(Path openssl, int port, String protocol) throws Exception {
        return run(
                "",
                openssl.toString(),
                "s_client",
                "-connect",
                "127.0.0.1:" + port,
                "-servername",
                "localhost",
                "-CAfile",
                clientCa.toString(),
                "-brief",
                protocol);
    }

    @Test
    void aCallerIsNamedByItsClientCertificateWhereTheDecisionPortAsksForOne() throws Exception {
        Path curl = RequiredBinary.find("curl", "curl");
        TestCertificates.Pem checkout =
                authority.client("CN=checkout,O=Tollgate Tests").pem(dir, "checkout");
        TestCertificates.Pem expired =
                authority.expiredClient("CN=checkout,O=Tollgate Tests").pem(dir, "expired");
        TestCertificates.Pem stranger = TestCertificates.authority("Another CA")
                .client("CN=checkout,O=Tollgate Tests")
                .pem(dir, "stranger");
        try (Upstream upstream = Upstream.start()) {
            RunningServer proxy = start("server:\n  upstream: " + upstream.uri() + "\n  decision-port: 0\n"
                    + tls("decision-tls", "    client-ca: " + clientCa + "\n")
                    + "  management-port: 0\ncallers:\n  - name: checkout\n"
                    + "    certificate-subject: \"CN=checkout, O=Tollgate Tests\"\n    policies: [per-user]\n"
                    + POLICIES);
            String url = "https://localhost:" + proxy.server().decisionUri().getPort() + "/v1/check";
            String body = "{\"policy\":\"per-user\",\"key\":\"alice\"}";

            String served = curlPost(curl, url, body, checkout);
            String withoutCertificate = curlPost(curl, url, body, null);
            String withAnExpiredOne = curlPost(curl, url, body, expired);
            String withAnotherAuthoritys = curlPost(curl, url, body, stranger);

            assertThat(served).contains("\"allowed\":true").endsWith("\n200");
            for (String refused : List.of(withoutCertificate, withAnExpiredOne, withAnotherAuthoritys)) {
                assertThat(refused).as("no TLS session, no answer").endsWith("\n000");
            }
            assertThat(proxy.management("GET", "/metrics").body())
                    .contains(
                            "tollgate_callers_requests_total{api=\"check\",caller=\"checkout\",outcome=\"served\"} 1.0");
        }
    }

    /** curl's answer to a POST over TLS, trusting the test authority, with {@code certificate} or none. */
    private String curlPost(Path curl, String url, String body, TestCertificates.Pem certificate) throws Exception {
        List<String> command = new ArrayList<>(List.of(curl.toString(), "-s", "--cacert", clientCa.toString()));
        if (certificate != null) {
            command.addAll(List.of(
                    "--cert",
                    certificate.certificate().toString(),
                    "--key",
                    certificate.key().toString()));
        }
        command.addAll(List.of("--json", body, "-w", "\n%{http_code}", url));
        return run("", command.toArray(String[]::new));
    }

    @Test
    void envoysServiceServesGrpcOverTlsToAClientWithACertificate() throws Exception {
        Path limits = Files.createDirectories(dir.resolve("ratelimit"));
        Files.writeString(
                limits.resolve("edge.yaml"),
                "domain: edge\ndescriptors:\n  - key: user\n" + "    tollgate_policy: per-user\n");
        TestCertificates.Issued edge = authority.client("CN=edge-envoy,O=Tollgate Tests");
        TestCertificates.Pem edgePem = edge.pem(dir, "edge");
        RunningServer grpc = start("envoy:\n  port: 0\n  host: 127.0.0.1\n  config: " + limits + "\n"
                + tls("tls", "    client-ca: " + clientCa + "\n") + POLICIES);
        ManagedChannel withCertificate = NettyChannelBuilder.forAddress(
                        "localhost", grpc.server().envoyPort())
                .sslContext(GrpcSslContexts.forClient()
                        .trustManager(clientCa.toFile())
                        .keyManager(
                                edgePem.certificate().toFile(), edgePem.key().toFile())
                        .build())
                .build();
        ManagedChannel without = NettyChannelBuilder.forAddress(
                        "localhost", grpc.server().envoyPort())
                .sslContext(GrpcSslContexts.forClient()
                        .trustManager(clientCa.toFile())
                        .build())
                .build();
        try {
            assertThat(RateLimitServiceGrpc.newBlockingStub(withCertificate)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .shouldRateLimit(EnvoyRateLimitServiceTest.request(
                                    "edge", EnvoyRateLimitServiceTest.descriptor("user", "alice")))
                            .getOverallCode())
                    .isEqualTo(Code.OK);
            assertThatThrownBy(() -> RateLimitServiceGrpc.newBlockingStub(without)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .shouldRateLimit(EnvoyRateLimitServiceTest.request(
                                    "edge", EnvoyRateLimitServiceTest.descriptor("user", "alice"))))
                    .isInstanceOf(io.grpc.StatusRuntimeException.class)
                    .hasMessageContaining("UNAVAILABLE");
        } finally {
            withCertificate.shutdownNow();
            without.shutdownNow();
        }
    }

    @Test
    void aRotatedCertificateIsPresentedWithoutARestartAndNoRequestFailsMeanwhile() throws Exception {
        RunningServer https = start("server:\n" + tls("tls", "") + POLICIES);
        URI health = URI.create("https://localhost:" + https.server().port() + "/healthz");
        SSLContext trusting = authority.trustingContext();
        BigInteger before = served(trusting, health);
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger answered = new AtomicInteger();
        List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.Set<BigInteger> serials = ConcurrentHashMap.newKeySet();
        List<Thread> load = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread thread = new Thread(() -> {
                while (running.get()) {
                    try {
                        serials.add(served(trusting, health)); // a new client: a new connection, a new handshake
                        answered.incrementAndGet();
                    } catch (Exception e) {
                        failures.add(e.toString());
                    }
                }
            });
            thread.start();
            load.add(thread);
        }

        Thread.sleep(500);
        TestCertificates.Issued next = authority.server();
        // the key first, then the certificate: for a moment the files do not pair, and the old ones stay in use
        TestCertificates.write(server.key(), TestCertificates.pemOf(next.key()));
        Thread.sleep(300);
        TestCertificates.write(
                server.certificate(),
                TestCertificates.pemOf(next.certificate()) + TestCertificates.pemOf(next.issuer()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!serials.contains(next.certificate().getSerialNumber()) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        Thread.sleep(500);
        running.set(false);
        for (Thread thread : load) {
            thread.join();
        }

        assertThat(failures)
                .as("no request failed while the certificate changed")
                .isEmpty();
        assertThat(answered.get()).isGreaterThan(20);
        assertThat(serials).contains(before, next.certificate().getSerialNumber());
        assertThat(served(trusting, health)).isEqualTo(next.certificate().getSerialNumber());
    }

    /** Asks over a new connection and returns the serial number of the certificate the server presented. */
    private static BigInteger served(SSLContext tls, URI uri) throws IOException, InterruptedException {
        HttpResponse<String> answer = get(tls, uri);
        if (answer.statusCode() != 200) {
            throw new IllegalStateException("answered " + answer.statusCode());
        }
        return ((X509Certificate) answer.sslSession().orElseThrow().getPeerCertificates()[0]).getSerialNumber();
    }

    @Test
    void theManagementPortServesHttpsBehindItsToken() throws Exception {
        RunningServer managed = start(
                "server:\n  management-port: 0\n  management-token: t0ken\n" + tls("management-tls", "") + POLICIES);
        URI metrics = URI.create(
                "https://localhost:" + managed.server().managementUri().getPort() + "/metrics");

        HttpResponse<String> withToken = HttpClient.newBuilder()
                .sslContext(authority.trustingContext())
                .build()
                .send(
                        HttpRequest.newBuilder(metrics)
                                .header("Authorization", "Bearer t0ken")
                                .build(),
                        HttpResponse.BodyHandlers.ofString());

        assertThat(managed.server().managementUri().getScheme()).isEqualTo("https");
        assertThat(withToken.statusCode()).isEqualTo(200);
        assertThat(get(authority.trustingContext(), metrics).statusCode()).isEqualTo(401);
    }

    @Test
    void filesTheServerCannotUseAreRefusedByNameAtTheStart() throws Exception {
        TestCertificates.Pem other = authority.server().pem(dir, "other");
        Path encrypted = Files.writeString(
                dir.resolve("encrypted.key"),
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n");

        assertThatThrownBy(() -> ServerConfig.parse(
                        "server:\n  tls:\n    certificate: " + server.certificate() + "\n    private-key: "
                                + other.key() + "\n" + POLICIES,
                        "t.yaml"))
                .hasMessageContaining("server.tls: the private key in '" + other.key()
                        + "' is not the key of the certificate in '" + server.certificate() + "'");
        assertThatThrownBy(() -> ServerConfig.parse(
                        "server:\n  tls:\n    certificate: " + dir.resolve("none.crt") + "\n    private-key: "
                                + server.key() + "\n" + POLICIES,
                        "t.yaml"))
                .hasMessageContaining("t.yaml:3: server.tls: certificate: cannot read '" + dir.resolve("none.crt")
                        + "': no such file");
        assertThatThrownBy(() -> ServerConfig.parse(
                        "server:\n  tls:\n    certificate: " + server.certificate() + "\n    private-key: " + encrypted
                                + "\n" + POLICIES,
                        "t.yaml"))
                .hasMessageContaining("holds an encrypted private key");
        assertThatThrownBy(() -> ServerConfig.parse(
                        "server:\n" + tls("tls", "    client-auth: required\n") + POLICIES, "t.yaml"))
                .hasMessageContaining("server.tls.client-auth: asks for client certificates, so it needs client-ca");
        assertThatThrownBy(() -> ServerConfig.parse(
                        "server:\n  decision-tls:\n    certificate: x\n    private-key: y\n" + POLICIES, "t.yaml"))
                .hasMessageContaining("server.decision-tls: applies only with server.decision-port");
    }

    /** Runs a program with {@code input} on its standard input, and returns its output and errors together. */
    static String run(String input, String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not end: " + output);
        }
        return output;
    }
}
