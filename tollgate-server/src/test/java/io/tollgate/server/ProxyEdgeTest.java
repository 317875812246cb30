package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.ManualTimeSource;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The proxy with clients that speak HTTP/1.1 in full and HTTP/1.0, over raw sockets: chunked bodies, HEAD,
 * {@code Expect: 100-continue}, pipelining, a reader slower than the upstream, a client that goes away.
 */
class ProxyEdgeTest {

    private Upstream upstream;
    private RunningServer server;

    @BeforeEach
    void start() throws Exception {
        upstream = Upstream.start();
        server = RunningServer.start("""
                policies:
                  one:
                    limits:
                      - capacity: 1
                        refill: 1/h
                concurrency-limits:
                  one-at-a-time:
                    max-in-flight: 1
                rules:
                  - path: /refused/**
                    policy: one
                  - path: /slow
                    concurrency-limit: one-at-a-time
                  - path: /fast
                    concurrency-limit: one-at-a-time
                server:
                  upstream: %s
                """.formatted(upstream.uri()), new ManualTimeSource());
    }

    @AfterEach
    void stop() {
        server.close();
        upstream.close();
    }

    @Test
    void anHttp10ClientGetsAnAnswerOfUnknownLengthWholeEndedByTheClose() throws Exception {
        try (Socket socket = connect()) {
            write(socket, "GET /chunked/100000 HTTP/1.0\r\n\r\n");

            Answer answer = Answer.read(socket.getInputStream());

            assertThat(answer.status()).isEqualTo(200);
            assertThat(answer.header("Transfer-Encoding")).isNull();
            assertThat(answer.body()).hasSize(100_000);
            assertThat(socket.getInputStream().read())
                    .as("closed after the body")
                    .isEqualTo(-1);
        }
    }

    @Test
    void aChunkedUploadReachesTheUpstreamWholeAndItsChunkedAnswerComesBack() throws Exception {
        try (Socket socket = connect()) {
            write(
                    socket,
                    "POST /chunked/70000 HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
                            + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");

            Answer answer = Answer.read(socket.getInputStream());

            assertThat(answer.status()).isEqualTo(200);
            assertThat(answer.header("X-Body-Bytes")).isEqualTo("11");
            assertThat(answer.header("Transfer-Encoding")).isEqualToIgnoringCase("chunked");
            assertThat(answer.body()).hasSize(70_000);
        }
    }

    @Test
    void headIsAnsweredWithoutABodyAndTheConnectionServesTheNextRequest() throws Exception {
        try (Socket socket = connect()) {
            write(socket, "HEAD /bytes/5000 HTTP/1.1\r\nHost: localhost\r\n\r\n");
            Answer head = Answer.readHead(socket.getInputStream());
            write(socket, "GET /after HTTP/1.1\r\nHost: localhost\r\n\r\n");
            Answer after = Answer.read(socket.getInputStream());

            assertThat(head.status()).isEqualTo(200);
            assertThat(after.status()).isEqualTo(200);
            assertThat(new String(after.body(), StandardCharsets.UTF_8)).isEqualTo("upstream saw GET /after");
        }
    }

    @Test
    void expectContinueIsAnsweredOnceTheRequestIsAllowedAndTheBodyThenGoesUpstream() throws Exception {
        try (Socket socket = connect()) {
            write(
                    socket,
                    "POST /upload HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
            Answer proceed = Answer.readHead(socket.getInputStream());
            write(socket, "hello");
            Answer answer = Answer.read(socket.getInputStream());

            assertThat(proceed.status()).isEqualTo(100);
            assertThat(answer.status()).isEqualTo(200);
            assertThat(answer.header("X-Body-Bytes")).isEqualTo("5");
        }
    }

    @Test
    void aRefusedRequestThatExpectsContinueIsAnsweredWithoutItsBodyEverBeingSent() throws Exception {
        server.get("/refused/x"); // takes the one token
        try (Socket socket = connect()) {
            write(
                    socket,
                    "POST /refused/x HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");

            Answer answer = Answer.read(socket.getInputStream());

            assertThat(answer.status()).isEqualTo(429);
            assertThat(answer.header("Retry-After")).isNotNull();
        }
        assertThat(upstream.received())
                .extracting(Upstream.Received::method)
                .as("only the first request went upstream")
                .containsExactly("GET");
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        try (Socket socket = connect()) {
            write(
                    socket,
                    "GET /first HTTP/1.1\r\nHost: localhost\r\n\r\nGET /bytes/3000 HTTP/1.1\r\nHost: localhost\r\n\r\n"
                            + "GET /third HTTP/1.1\r\nHost: localhost\r\n\r\n");

            Answer first = Answer.read(socket.getInputStream());
            Answer second = Answer.read(socket.getInputStream());
            Answer third = Answer.read(socket.getInputStream());

            assertThat(new String(first.body(), StandardCharsets.UTF_8)).isEqualTo("upstream saw GET /first");
            assertThat(second.body()).hasSize(3000);
            assertThat(new String(third.body(), StandardCharsets.UTF_8)).isEqualTo("upstream saw GET /third");
        }
    }

    @Test
    void aSlowReaderHoldsTheUpstreamBackRatherThanThisProcessHoldingTheAnswer() throws Exception {
        long size = 256L * 1024 * 1024;
        try (Socket socket = connect()) {
            socket.setReceiveBufferSize(64 * 1024);
            write(socket, "GET /bytes/" + size + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
            InputStream in = socket.getInputStream();
            Answer head = Answer.readHead(in);
            long read = in.readNBytes(1024 * 1024).length;
            TimeUnit.MILLISECONDS.sleep(1_500);
            long writtenWhileWaiting = upstream.bytesWritten();

            byte[] buffer = new byte[256 * 1024];
            for (int n; read < size && (n = in.read(buffer)) > 0; ) {
                read += n;
            }

            assertThat(head.status()).isEqualTo(200);
            assertThat(writtenWhileWaiting)
                    .as("the upstream waits for the reader: what it wrote is in socket buffers, not this process")
                    .isLessThan(64L * 1024 * 1024);
            assertThat(read).isEqualTo(size);
        }
    }

    /** The slot goes back as soon as the client has gone, though the upstream has not answered. */
    @Test
    void aClientThatGoesAwayGivesBackItsConcurrencySlot() throws Exception {
        try (Socket socket = connect()) {
            write(socket, "GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n");
            for (int i = 0; i < 200 && upstream.received().isEmpty(); i++) {
                TimeUnit.MILLISECONDS.sleep(25);
            }
        }
        int status = server.get("/fast").statusCode();
        for (int i = 0; i < 100 && status == 429; i++) {
            TimeUnit.MILLISECONDS.sleep(50);
            status = server.get("/fast").statusCode();
        }

        assertThat(upstream.received()).extracting(Upstream.Received::path).contains("/slow");
        assertThat(status)
                .as("the slot /slow held went back when its client went away")
                .isEqualTo(200);
    }

    @Test
    void anUpstreamSlowerThanTheIdleTimeoutIsWaitedForUntilTheUpstreamTimeout() throws Exception {
        try (Upstream slow = Upstream.start();
                RunningServer proxy = RunningServer.start(
                        "server: {idle-timeout: 1s, upstream-timeout: 10s, upstream: " + slow.uri() + "}\n",
                        new ManualTimeSource())) {
            CompletableFuture<HttpResponse<String>> answer = proxy.client()
                    .sendAsync(
                            HttpRequest.newBuilder(proxy.uri("/slow")).build(), HttpResponse.BodyHandlers.ofString());
            TimeUnit.MILLISECONDS.sleep(2_500);
            slow.release();

            assertThat(answer.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aRequestWithoutBodyIsSentAgainWhenTheKeptAliveConnectionClosesUnderIt() throws Exception {
        try (ClosingUpstream closing = new ClosingUpstream();
                RunningServer proxy = RunningServer.start(
                        "server: {upstream: http://127.0.0.1:" + closing.port() + "}\n", new ManualTimeSource())) {
            int first = proxy.get("/first").statusCode();
            int second = proxy.get("/second").statusCode();

            assertThat(first).isEqualTo(200);
            assertThat(second).as("sent again on a new connection").isEqualTo(200);
            assertThat(closing.connections()).isEqualTo(2);
        }
    }

    /**
     * An upstream that answers the first request of each connection, keeping it alive, and closes the connection
     * when a second request comes on it, as one does whose idle timeout ends as the request arrives.
     */
    private static final class ClosingUpstream implements AutoCloseable {
        private final ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final AtomicInteger connections = new AtomicInteger();
        private final Thread acceptor = new Thread(this::accept, "closing-upstream");

        ClosingUpstream() throws IOException {
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        int connections() {
            return connections.get();
        }

        private void accept() {
            while (!listener.isClosed()) {
                try {
                    Socket socket = listener.accept();
                    connections.incrementAndGet();
                    Thread serving = new Thread(() -> serve(socket));
                    serving.setDaemon(true);
                    serving.start();
                } catch (IOException closed) {
                    return;
                }
            }
        }

        private static void serve(Socket socket) {
            try (socket) {
                InputStream in = socket.getInputStream();
                readHead(in);
                socket.getOutputStream()
                        .write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.ISO_8859_1));
                socket.getOutputStream().flush();
                readHead(in); // the second request: closed unanswered
            } catch (IOException gone) {
                // the proxy went away first
            }
        }

        private static void readHead(InputStream in) throws IOException {
            int matched = 0;
            for (int b = in.read(); b >= 0; b = in.read()) {
                matched = (b == '\r' || b == '\n') ? matched + 1 : 0;
                if (matched == 4) {
                    return;
                }
            }
            throw new IOException("closed");
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket("127.0.0.1", server.server().port());
        socket.setSoTimeout(20_000);
        return socket;
    }

    private static void write(Socket socket, String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
        socket.getOutputStream().flush();
    }

    /** An answer read off a socket: the status line's code, the header fields, and the body. */
    record Answer(int status, List<String> headers, byte[] body) {

        String header(String name) {
            for (String line : headers) {
                int colon = line.indexOf(':');
                if (line.substring(0, colon).equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).strip();
                }
            }
            return null;
        }

        /** Reads the status line and header fields only. */
        static Answer readHead(InputStream in) throws IOException {
            String statusLine = line(in);
            List<String> headers = new ArrayList<>();
            for (String line = line(in); !line.isEmpty(); line = line(in)) {
                headers.add(line);
            }
            return new Answer(Integer.parseInt(statusLine.substring(9, 12)), headers, new byte[0]);
        }

        /** Reads a whole answer: by its length, its chunks, or until the connection closes. */
        static Answer read(InputStream in) throws IOException {
            Answer head = readHead(in);
            String length = head.header("Content-Length");
            byte[] body;
            if (head.status() == 204 || head.status() == 304) {
                body = new byte[0];
            } else if (length != null) {
                body = in.readNBytes(Integer.parseInt(length));
            } else if ("chunked".equalsIgnoreCase(head.header("Transfer-Encoding"))) {
                ByteArrayOutputStream chunks = new ByteArrayOutputStream();
                for (int size = Integer.parseInt(line(in).split(";")[0].strip(), 16);
                        size > 0;
                        size = Integer.parseInt(line(in).split(";")[0].strip(), 16)) {
                    chunks.writeBytes(in.readNBytes(size));
                    line(in);
                }
                while (!line(in).isEmpty()) {
                    // trailers
                }
                body = chunks.toByteArray();
            } else {
                body = in.readAllBytes();
            }
            return new Answer(head.status(), head.headers(), body);
        }

        private static String line(InputStream in) throws IOException {
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                if (b < 0) {
                    throw new IOException("the connection closed mid-line: '" + line + "'");
                }
                if (b != '\r') {
                    line.append((char) b);
                }
            }
            return line.toString();
        }
    }
}
