package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.ManualTimeSource;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The proxy against what a hostile client writes on a raw socket: requests that two HTTP parsers could frame
 * differently (smuggling) are refused with 400 and the connection closed, never forwarded; the edge's limits hold;
 * HTTP/1.0 and pipelined requests are each counted once; and nothing a client writes changes where the proxy sends.
 */
class HostileHttpTest {

    private static final Pattern STATUS = Pattern.compile("HTTP/1\\.[01] (\\d{3}) ");

    private static final String PATIENT =
            "GET /api/x HTTP/1.1\r\nHost: h\r\nX-API-Key: patient\r\nConnection: close\r\n\r\n";

    private static Upstream upstream;
    private static RunningServer server;

    @BeforeAll
    static void start() throws Exception {
        upstream = Upstream.start();
        server = RunningServer.start("""
                policies:
                  burst:
                    limits:
                      - capacity: 3
                        refill: 1 per 10s
                rules:
                  - path: /api/**
                    key: header:X-API-Key
                    policy: burst
                server:
                  upstream: %s
                """.formatted(upstream.uri()), new ManualTimeSource());
    }

    @AfterAll
    static void stop() {
        server.close();
        upstream.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                // Content-Length and Transfer-Encoding both: one parser reads the length, another the chunks
                "POST /api/x HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                "POST /api/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n",
                // two lengths, alike or not
                "POST /api/x HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde",
                "POST /api/x HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nabcd",
                "POST /api/x HTTP/1.1\r\nHost: h\r\nContent-Length: 4, 4\r\n\r\nabcd",
                // a coding other than chunked, alone or before it, or two fields
                "POST /api/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n",
                "POST /api/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
                "POST /api/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
                "POST /api/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                // the framing field folded over two lines (obs-fold)
                "POST /api/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n",
                // two hosts
                "GET /api/x HTTP/1.1\r\nHost: h\r\nHost: other.example\r\nX-API-Key: s\r\n\r\n",
                // a space before the colon, a field without one
                "POST /api/x HTTP/1.1\r\nHost: h\r\nContent-Length : 4\r\n\r\nabcd",
                "GET /api/x HTTP/1.1\r\nHost: h\r\nno colon here\r\n\r\n",
            })
    void aRequestThatParsersCouldFrameDifferentlyIsRefusedAndTheConnectionClosed(String request) throws IOException {
        int before = upstream.received().size();

        List<Integer> statuses = exchange(request + "GET /api/smuggled HTTP/1.1\r\nHost: h\r\nX-API-Key: s\r\n\r\n");

        assertThat(statuses).as("the refusal, and nothing answered after it").containsExactly(400);
        assertThat(upstream.received()).as("requests forwarded").hasSize(before);
    }

    @Test
    void aChunkSizePastAnyLengthIsRefusedAndNothingAfterItForwarded() throws IOException {
        List<Integer> statuses = exchange("POST /api/x HTTP/1.1\r\nHost: h\r\nX-API-Key: chunks\r\n"
                + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffff1\r\nab\r\n0\r\n\r\n"
                + "GET /api/smuggled HTTP/1.1\r\nHost: h\r\nX-API-Key: s\r\n\r\n");

        // The head may have gone upstream before the chunk was read; its connection is closed, its body never whole
        assertThat(statuses).containsExactly(400);
        assertThat(upstream.received()).extracting(Upstream.Received::path).doesNotContain("/api/smuggled");
    }

    @Test
    void aFieldFoldedOverTwoLinesIsForwardedOnOne() throws IOException {
        int before = upstream.received().size();

        List<Integer> statuses = exchange("GET /api/folded HTTP/1.1\r\nHost: h\r\nX-API-Key: folded\r\n"
                + "X-Note: a\r\n b\r\nConnection: close\r\n\r\n");

        assertThat(statuses).containsExactly(200);
        assertThat(upstream.received().get(before).header("X-Note")).isEqualTo("a b");
    }

    @Test
    void aClientKeyGivenTwiceIsRefusedAndNeitherIsCharged() throws IOException {
        int before = upstream.received().size();

        List<Integer> twice = exchange("GET /api/x HTTP/1.1\r\nHost: h\r\nX-API-Key: mine\r\nX-API-Key: victim\r\n"
                + "Connection: close\r\n\r\n");
        List<Integer> victim = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            victim.addAll(exchange("GET /api/x HTTP/1.1\r\nHost: h\r\nX-API-Key: victim\r\nConnection: close\r\n\r\n"));
        }

        assertThat(twice).containsExactly(400);
        assertThat(victim).as("the victim's whole burst of 3 left").containsExactly(200, 200, 200);
        assertThat(upstream.received()).hasSize(before + 3);
    }

    @Test
    void aChunkedBodyAloneIsForwardedWhole() throws IOException {
        int before = upstream.received().size();

        List<Integer> statuses = exchange("POST /api/chunked HTTP/1.1\r\nHost: h\r\nX-API-Key: chunks\r\n"
                + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n4\r\nabcd\r\n0\r\n\r\n");

        assertThat(statuses).containsExactly(200);
        assertThat(upstream.received()).hasSize(before + 1);
    }

    @Test
    void aBodyPastTheLimitIs413AndNeverForwardedWhole() throws Exception {
        try (RunningServer small = RunningServer.start("""
                server:
                  upstream: %s
                  max-body-size: 1KiB
                """.formatted(upstream.uri()))) {
            int port = small.server().port();
            int before = upstream.received().size();
            String chunk = "x".repeat(700);

            List<Integer> declared = exchange(
                    port, "POST /api/big HTTP/1.1\r\nHost: h\r\nContent-Length: 1025\r\n\r\n" + "y".repeat(1025));
            int afterDeclared = upstream.received().size();
            List<Integer> chunked = exchange(
                    port,
                    "POST /api/big HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2bc\r\n" + chunk
                            + "\r\n2bc\r\n" + chunk + "\r\n0\r\n\r\n");
            List<Integer> within = exchange(
                    port,
                    "POST /api/small HTTP/1.1\r\nHost: h\r\nContent-Length: 1024\r\nConnection: close\r\n\r\n"
                            + "z".repeat(1024));

            assertThat(declared).containsExactly(413);
            assertThat(afterDeclared)
                    .as("a declared length past the limit is not forwarded")
                    .isEqualTo(before);
            assertThat(chunked)
                    .as("chunks past the limit: the upstream's copy is cut off")
                    .containsExactly(413);
            assertThat(within).containsExactly(200);
        }
    }

    @Test
    void fiveHundredClientsSendingTheirHeadsSlowlyKeepNobodyElseWaiting() throws IOException {
        List<Socket> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 500; i++) {
                Socket socket = new Socket("127.0.0.1", server.server().port());
                socket.getOutputStream()
                        .write("GET /api/slow HTTP/1.1\r\nHost: h\r\nX-API-Key: slow-"
                                .getBytes(StandardCharsets.US_ASCII));
                slow.add(socket);
            }
            List<Integer> first = exchange(PATIENT);
            for (Socket socket : slow) {
                socket.getOutputStream().write('x'); // one more byte each: still no end to their heads
            }
            List<Integer> second = exchange(PATIENT);

            assertThat(first).containsExactly(200);
            assertThat(second).containsExactly(200);
        } finally {
            for (Socket socket : slow) {
                socket.close();
            }
        }
    }

    @Test
    void moreHeaderFieldsThanTheLimitAre431() throws IOException {
        StringBuilder request = new StringBuilder("GET /api/x HTTP/1.1\r\nHost: h\r\n");
        for (int i = 0; i < 101; i++) {
            request.append("X-").append(i).append(": v\r\n");
        }

        assertThat(exchange(request + "\r\n")).containsExactly(431);
    }

    @Test
    void http10AndPipelinedRequestsAreEachCountedOnce() throws IOException {
        List<Integer> http10 = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            http10.addAll(exchange("GET /api/x HTTP/1.0\r\nX-API-Key: old\r\n\r\n"));
        }
        String one = "GET /api/x HTTP/1.1\r\nHost: h\r\nX-API-Key: piped\r\n\r\n";
        List<Integer> pipelined = exchange(one + one + one + one.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"));

        assertThat(http10).containsExactly(200, 200, 200, 429);
        assertThat(pipelined).containsExactly(200, 200, 200, 429);
    }

    @Test
    void neitherHostNorAnAbsoluteFormTargetChangesWhereTheProxySends() throws IOException {
        int before = upstream.received().size();

        List<Integer> statuses = exchange(
                "GET http://169.254.169.254/api/meta HTTP/1.1\r\nHost: 169.254.169.254\r\n"
                        + "X-API-Key: where\r\n\r\n"
                        + "GET /api/host HTTP/1.1\r\nHost: internal.example:8080\r\nX-API-Key: where\r\nConnection: close\r\n\r\n");

        assertThat(statuses).containsExactly(200, 200);
        assertThat(upstream.received().subList(before, upstream.received().size()))
                .extracting(Upstream.Received::path, received -> received.header("Host"))
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(
                                "/api/meta", upstream.uri().getAuthority()),
                        org.assertj.core.groups.Tuple.tuple(
                                "/api/host", upstream.uri().getAuthority()));
    }

    /** Writes {@code bytes} at once and returns the status of every answer read until the server closes. */
    private static List<Integer> exchange(String bytes) throws IOException {
        return exchange(server.server().port(), bytes);
    }

    private static List<Integer> exchange(int port, String bytes) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(bytes.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            try {
                in.transferTo(all);
            } catch (SocketTimeoutException stillOpen) {
                throw new AssertionError(
                        "the connection was still open after 10 s: " + all.toString(StandardCharsets.ISO_8859_1));
            } catch (IOException reset) {
                // a reset after the answers were read
            }
            List<Integer> statuses = new ArrayList<>();
            Matcher status = STATUS.matcher(all.toString(StandardCharsets.ISO_8859_1));
            while (status.find()) {
                statuses.add(Integer.parseInt(status.group(1)));
            }
            return statuses;
        }
    }
}
