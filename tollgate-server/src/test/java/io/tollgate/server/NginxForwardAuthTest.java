package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.testing.FreePorts;
import io.tollgate.testing.RequiredBinary;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * examples/nginx as it is, on free ports: Debian's nginx in front of an upstream, asking a Tollgate server with
 * examples/nginx/tollgate.yaml about each request through {@code auth_request}.
 */
class NginxForwardAuthTest {

    private final HttpClient client = HttpClient.newBuilder().build();
    private final List<String> reached = new CopyOnWriteArrayList<>();
    private HttpServer upstream;
    private TollgateServer tollgate;
    private Process nginx;
    private int nginxPort;

    @TempDir
    Path dir;

    @BeforeEach
    void start() throws Exception {
        Path binary = RequiredBinary.find("nginx", "nginx");
        upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        upstream.setExecutor(Executors.newCachedThreadPool());
        upstream.createContext("/", exchange -> {
            try (exchange) {
                reached.add(exchange.getRequestURI().toString());
                byte[] body = "served".getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            }
        });
        upstream.start();
        tollgate = TollgateServer.start(
                ServerConfig.load(DocumentationExamples.PROJECT.resolve("examples/nginx/tollgate.yaml"))
                        .withPort(0));
        nginxPort = FreePorts.nobodyListens();
        String conf = Files.readString(DocumentationExamples.PROJECT.resolve("examples/nginx/nginx.conf"))
                .replace("127.0.0.1:8000", "127.0.0.1:" + nginxPort)
                .replace("127.0.0.1:9000", "127.0.0.1:" + upstream.getAddress().getPort())
                .replace("127.0.0.1:8080", "127.0.0.1:" + tollgate.port());
        Files.writeString(dir.resolve("nginx.conf"), conf);
        nginx = new ProcessBuilder(binary.toString(), "-p", dir.toString(), "-c", "nginx.conf", "-g", "daemon off;")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("nginx.log").toFile())
                .start();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!listening(nginxPort)) {
            assertThat(nginx.isAlive())
                    .as("nginx runs: %s", Files.readString(dir.resolve("nginx.log")))
                    .isTrue();
            assertThat(System.nanoTime()).as("nginx listens within 10 s").isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @AfterEach
    void stop() throws Exception {
        if (nginx != null) {
            nginx.destroy();
            nginx.waitFor();
        }
        if (tollgate != null) {
            tollgate.close();
        }
        if (upstream != null) {
            upstream.stop(0);
        }
    }

    @Test
    void aClientGetsItsCapacityWithTheRateLimitFieldsThenA429ThatNeverReachesTheUpstream() throws Exception {
        HttpResponse<String> first = get("/orders", "203.0.113.9");
        HttpResponse<String> second = get("/orders", "198.51.100.1");
        HttpResponse<String> third = get("/orders", "192.0.2.77");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("served");
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"per-ip\";q=2;w=120");
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=1;t=60");
        assertThat(second.statusCode())
                .as("a forged X-Forwarded-For does not make another client")
                .isEqualTo(200);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(third.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=0;t=120");
        assertThat(third.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(third.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit exceeded; retry in 60 s.\",\"retry_after\":60}\n");
        assertThat(reached).as("what reached the upstream").containsExactly("/orders", "/orders");
    }

    @Test
    void withTollgateDownTheExampleFailsOpen() throws Exception {
        tollgate.close();
        tollgate = null;

        HttpResponse<String> response = get("/orders", null);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("served");
        assertThat(reached).containsExactly("/orders");
    }

    private HttpResponse<String> get(String path, String forgedForwardedFor) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + nginxPort + path))
                .timeout(Duration.ofSeconds(10));
        if (forgedForwardedFor != null) {
            request.header("X-Forwarded-For", forgedForwardedFor);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static boolean listening(int port) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
