package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.testing.FreePorts;
import io.tollgate.testing.RequiredBinary;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/migrating.md's nginx {@code limit_req} and the proxy's file it becomes, side by side in front of one upstream:
 * Debian's nginx runs the page's lines as they are, the server runs the page's file, and a burst of one client
 * is admitted alike: the burst of 20 and the request itself, then what the rate of 10 a second gives back. nginx
 * answers the rest 503, Tollgate 429, as the page says.
 */
@Timeout(60)
class NginxLimitReqMigrationTest {

    private static final String PAGE = "docs/migrating.md";
    private static final int BURST = 30;

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @TempDir
    Path dir;

    @Test
    void nginxLimitReqAndTheProxysFileAdmitTheSameBurst() throws Exception {
        Path nginx = RequiredBinary.find("nginx", "nginx");
        String lines = DocumentationExamples.blocks(PAGE, "nginx").get(0);
        String yaml = DocumentationExamples.blocks(PAGE, "yaml").stream()
                .filter(block -> block.contains("perip"))
                .findFirst()
                .orElseThrow();
        try (Upstream upstream = Upstream.start()) {
            int port = FreePorts.nobodyListens();
            Process process = startNginx(nginx, lines, port, upstream.uri().getPort());
            try (RunningServer server = RunningServer.start(
                    yaml.replace("http://127.0.0.1:9000", upstream.uri().toString()))) {
                URI viaNginx = URI.create("http://127.0.0.1:" + port);
                URI viaTollgate = server.server().uri();
                warmUp(viaNginx);
                warmUp(viaTollgate);
                List<Integer> byNginx = new ArrayList<>();
                long nginxMillis = burst(viaNginx.resolve("/api/items"), byNginx);
                List<Integer> byTollgate = new ArrayList<>();
                long tollgateMillis = burst(viaTollgate.resolve("/api/items"), byTollgate);

                assertThat(admitted(byNginx)).as("nginx: %s", byNginx).isBetween(21L, 21L + (nginxMillis + 99) / 100);
                assertThat(admitted(byTollgate))
                        .as("Tollgate: %s", byTollgate)
                        .isBetween(21L, 21L + (tollgateMillis + 99) / 100);
                assertThat(byNginx).containsOnly(200, 503);
                assertThat(byTollgate).containsOnly(200, 429);
            } finally {
                process.destroy();
                process.waitFor();
            }
        }
    }

    /** One client's requests all at once, their statuses added; the ms from the first sent to the last answered. */
    private long burst(URI uri, List<Integer> statuses) throws Exception {
        List<CompletableFuture<HttpResponse<Void>>> answers = new ArrayList<>();
        long start = System.nanoTime();
        for (int request = 0; request < BURST; request++) {
            answers.add(client.sendAsync(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding()));
        }
        for (CompletableFuture<HttpResponse<Void>> answer : answers) {
            statuses.add(answer.get(10, TimeUnit.SECONDS).statusCode());
        }
        return Duration.ofNanos(System.nanoTime() - start).toMillis();
    }

    /** Requests on a path no limit covers, so that the burst meets warm connections and compiled code. */
    private void warmUp(URI base) throws Exception {
        for (int request = 0; request < 20; request++) {
            client.send(
                    HttpRequest.newBuilder(base.resolve("/warm-up")).build(), HttpResponse.BodyHandlers.discarding());
        }
    }

    private static long admitted(List<Integer> statuses) {
        return statuses.stream().filter(status -> status == 200).count();
    }

    /**
     * nginx with the page's lines where nginx takes them: {@code limit_req_zone} in {@code http}, the {@code location}
     * in a {@code server} on {@code port}, proxying to the upstream on its port.
     */
    private Process startNginx(Path nginx, String lines, int port, int upstreamPort) throws Exception {
        int location = lines.indexOf("location");
        String zone = lines.substring(0, location);
        String where = lines.substring(location).replace("127.0.0.1:9000", "127.0.0.1:" + upstreamPort);
        Files.writeString(dir.resolve("nginx.conf"), """
                worker_processes 1;
                pid nginx.pid;
                error_log stderr warn;
                events {}
                http {
                    access_log off;
                    %s
                    server {
                        listen 127.0.0.1:%d;
                        %s
                    }
                }
                """.formatted(zone, port, where));
        return ProxyProcesses.start(
                new ProcessBuilder(nginx.toString(), "-p", dir.toString(), "-c", "nginx.conf", "-g", "daemon off;"),
                dir,
                dir.resolve("nginx.log"),
                port);
    }
}
