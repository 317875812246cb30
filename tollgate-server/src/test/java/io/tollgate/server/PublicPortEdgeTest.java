package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The public port's edge: malformed requests, oversized request lines and
 * headers, HEAD, HTTP/1.0, pipelining, {@code Expect: 100-continue}, and clients that stall or never read, each
 * answered or closed, never a stuck connection; raw bytes over loopback.
 */
@Timeout(60)
class PublicPortEdgeTest {

    private static final Pattern STATUS_LINE = Pattern.compile("HTTP/1\\.[01] (\\d{3}) ");

    private static RunningServer server;

    @BeforeAll
    static void start() throws Exception {
        server = RunningServer.start("""
                server: {idle-timeout: 1s}
                policies:
                  per-client:
                    limits:
                      - capacity: 10
                        refill: 1/h
                """);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void aMalformedRequestLineIsA400Problem() throws Exception {
        RawHttp.Answer answer = RawHttp.send(port(), "GET /a b HTTP/1.1\r\nHost: localhost");

        assertThat(answer.status()).isEqualTo(400);
        assertThat(answer.header("Content-Type")).containsExactly("application/problem+json");
    }

    @Test
    void aHeaderLineWithoutAColonIsA400Problem() throws Exception {
        RawHttp.Answer answer = RawHttp.send(port(), "GET /healthz HTTP/1.1\r\nHost: localhost\r\nNo colon here");

        assertThat(answer.status()).isEqualTo(400);
        assertThat(answer.header("Content-Type")).containsExactly("application/problem+json");
    }

    @Test
    void headersOverEightKilobytesAreA431Problem() throws Exception {
        RawHttp.Answer answer =
                RawHttp.send(port(), "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + "b".repeat(10_000));

        assertThat(answer.status()).isEqualTo(431);
        assertThat(answer.header("Content-Type")).containsExactly("application/problem+json");
    }

    @Test
    void aRequestLineOverEightKilobytesIsA414Problem() throws Exception {
        RawHttp.Answer answer = RawHttp.send(port(), "GET /" + "a".repeat(10_000) + " HTTP/1.1\r\nHost: localhost");

        assertThat(answer.status()).isEqualTo(414);
        assertThat(answer.header("Content-Type")).containsExactly("application/problem+json");
    }

    @Test
    void headAnswersTheHeadersOfGetWithoutTheBody() throws Exception {
        RawHttp.Answer answer = RawHttp.send(port(), "HEAD /healthz HTTP/1.1\r\nHost: localhost");

        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.header("Content-Length")).containsExactly("15");
        assertThat(answer.body()).isEmpty();
    }

    @Test
    void anHttp10ClientIsAnsweredAndTheConnectionClosed() throws Exception {
        String answer = exchange("GET /healthz HTTP/1.0\r\n\r\n");

        assertThat(statuses(answer)).containsExactly(200);
        assertThat(answer).endsWith("{\"status\":\"up\"}");
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        String check = "POST /v1/check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Content-Length: %d\r\n%s\r\n%s";
        String body = "{\"policy\": \"per-client\", \"key\": \"pipelined\", \"cost\": 4}";
        String three = check.formatted(body.length(), "", body)
                + check.formatted(body.length(), "", body)
                + check.formatted(body.length(), "Connection: close\r\n", body);

        String answers = exchange(three);

        assertThat(statuses(answers)).containsExactly(200, 200, 429);
        assertThat(answers).contains("\"remaining\":6", "\"remaining\":2");
    }

    @Test
    void expectContinueGetsTheBodyDecided() {
        HttpResponse<String> response = server.send(server.request("/v1/check")
                .expectContinue(true)
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"policy\": \"per-client\", \"key\": \"expecting\", \"cost\": 1}"))
                .build());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"remaining\":9");
    }

    @Test
    void aClientThatStopsHalfWayThroughItsRequestIsClosedAfterTheIdleTimeout() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: loc".getBytes(StandardCharsets.US_ASCII));
            long start = System.nanoTime();

            readToEnd(socket.getInputStream()); // returns at the close, or fails after 10 s

            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(500L, 9_000L);
        }
    }

    @Test
    void aClientThatNeverReadsIsClosedAndOthersAreServed() throws Exception {
        byte[] request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(4_096);
            socket.connect(new java.net.InetSocketAddress("127.0.0.1", port()));
            CompletableFuture<String> writer = CompletableFuture.supplyAsync(() -> {
                try {
                    OutputStream out = socket.getOutputStream();
                    for (int i = 0; i < 200_000; i++) {
                        out.write(request);
                    }
                    return "wrote every request";
                } catch (IOException closed) {
                    return "closed";
                }
            });

            HttpResponse<String> other = server.get("/healthz");
            String written = writer.get(30, TimeUnit.SECONDS);

            assertThat(other.statusCode()).isEqualTo(200);
            assertThat(written).isEqualTo("closed");
        }
    }

    private static int port() {
        return server.server().port();
    }

    /** Writes {@code requests} on a new connection and reads until the server closes it. */
    private static String exchange(String requests) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(requests.getBytes(StandardCharsets.US_ASCII));
            return readToEnd(socket.getInputStream());
        }
    }

    private static String readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream read = new ByteArrayOutputStream();
        try {
            in.transferTo(read);
        } catch (SocketException reset) {
            // closed with unread bytes in its buffer: what came before is all there is
        }
        return read.toString(StandardCharsets.ISO_8859_1);
    }

    private static List<Integer> statuses(String answers) {
        List<Integer> statuses = new ArrayList<>();
        Matcher matcher = STATUS_LINE.matcher(answers);
        while (matcher.find()) {
            statuses.add(Integer.parseInt(matcher.group(1)));
        }
        return statuses;
    }
}
