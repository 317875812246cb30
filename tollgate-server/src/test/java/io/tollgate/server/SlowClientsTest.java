package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Clients that would hold connections without sending a request: one that sends its head a byte at a time, never
 * idle long enough for the idle timeout, is answered 408 once the head's deadline passes; connections past the
 * limit are closed before a byte is read. Both are counted.
 */
class SlowClientsTest {

    @Test
    void aHeadSentAByteAtATimeIsCutOffAtItsDeadlineWith408() throws Exception {
        try (RunningServer server = RunningServer.start("""
                server:
                  port: 0
                  management-port: 0
                  request-head-timeout: 1s
                  idle-timeout: 30s
                """);
                Socket slow = new Socket("127.0.0.1", server.server().port())) {
            slow.setSoTimeout(10_000); // the margin: the deadline is 1 s
            OutputStream out = slow.getOutputStream();
            out.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            AtomicBoolean trickling = new AtomicBoolean(true);
            CompletableFuture<Void> trickle = CompletableFuture.runAsync(() -> {
                try {
                    for (int i = 0; i < 100 && trickling.get(); i++) {
                        out.write('x'); // a byte every 100 ms: never idle for the idle timeout
                        out.flush();
                        TimeUnit.MILLISECONDS.sleep(100);
                    }
                } catch (IOException | InterruptedException closed) {
                    // the server closed the connection
                }
            });

            String answer = readToEnd(slow.getInputStream());
            trickling.set(false);
            trickle.join();

            assertThat(answer).startsWith("HTTP/1.1 408 Request Timeout").contains("server.request-head-timeout");
            assertThat(server.get("/healthz").statusCode())
                    .as("a client that sends its head at once")
                    .isEqualTo(200);
            assertThat(server.management("GET", "/metrics").body())
                    .contains("tollgate_server_connections_refused_total{reason=\"head-timeout\"} 1.0");
        }
    }

    @Test
    void connectionsPastTheLimitAreClosedBeforeAByteIsReadAndTheFirstServed() throws Exception {
        try (RunningServer server = RunningServer.start("""
                server:
                  port: 0
                  max-connections: 3
                  expose-metrics-publicly: true
                  warm-up: false
                """)) {
            List<Socket> held = new ArrayList<>();
            try {
                // Each held connection is answered once, so the server has taken it before the next comes: no wait
                // for the accept on a clock
                for (int i = 0; i < 3; i++) {
                    Socket socket = new Socket("127.0.0.1", server.server().port());
                    socket.setSoTimeout(10_000);
                    socket.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes());
                    assertThat(readHead(socket.getInputStream())).startsWith("HTTP/1.1 200");
                    held.add(socket);
                }
                try (Socket over = new Socket("127.0.0.1", server.server().port())) {
                    over.setSoTimeout(10_000);
                    over.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes());

                    assertThat(over.getInputStream().read())
                            .as("closed at once")
                            .isEqualTo(-1);
                }
                // Read on a held connection, which the limit cannot refuse
                Socket first = held.get(0);
                first.getOutputStream()
                        .write("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".getBytes());
                assertThat(readToEnd(first.getInputStream()))
                        .startsWith("HTTP/1.1 200")
                        .contains("tollgate_server_connections_refused_total{reason=\"max-connections\"} 1.0");
            } finally {
                for (Socket socket : held) {
                    socket.close();
                }
            }
        }
    }

    /** Reads an answer's head and its body of {@code Content-Length} bytes, leaving the connection open. */
    private static String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.append((char) b);
        }
        Matcher length = Pattern.compile("(?i)content-length: (\\d+)").matcher(head);
        if (length.find()) {
            in.readNBytes(Integer.parseInt(length.group(1)));
        }
        return head.toString();
    }

    private static String readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        in.transferTo(all);
        return all.toString(StandardCharsets.US_ASCII);
    }
}
