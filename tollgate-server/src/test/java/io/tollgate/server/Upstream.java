package io.tollgate.server;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A real upstream on a loopback port, the JDK's own HTTP server, that tells what reached it:
 *
 * <ul>
 *   <li>any path: 200, {@code X-Upstream-Path} = the path and query it received, {@code X-Body-Bytes} and
 *       {@code X-Body-Sha256} of the body it read, and the request's headers recorded for the test;
 *   <li>{@code /slow}: answers only after {@link #release()} (or 30 s);
 *   <li>{@code /bytes/N}: a body of N bytes, streamed with its length; {@code /chunked/N}: the same in chunks;
 *   <li>{@code /status/N}: status N;
 *   <li>a query {@code used=N}: {@code X-Tokens-Used: N} on the answer, whatever the path.
 * </ul>
 */
final class Upstream implements AutoCloseable {

    /** What one request looked like when it arrived. */
    record Received(String method, String path, Map<String, List<String>> headers, int remotePort) {

        /** Returns the first value of a header, or null; names ignore case. */
        String header(String name) {
            for (Map.Entry<String, List<String>> header : headers.entrySet()) {
                if (header.getKey().equalsIgnoreCase(name)) {
                    return header.getValue().get(0);
                }
            }
            return null;
        }
    }

    private final HttpServer server;
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final Set<Integer> connections = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicLong bytesWritten = new java.util.concurrent.atomic.AtomicLong();
    private final CountDownLatch slow = new CountDownLatch(1);

    private Upstream() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", this::serve);
        server.start();
    }

    static Upstream start() throws IOException {
        return new Upstream();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    List<Received> received() {
        return received;
    }

    /** Returns how many bytes of {@code /bytes/N} and {@code /chunked/N} bodies have been written so far. */
    long bytesWritten() {
        return bytesWritten.get();
    }

    /** Returns how many connections the requests arrived on. */
    int connections() {
        return connections.size();
    }

    /** Lets every request to {@code /slow} be answered. */
    void release() {
        slow.countDown();
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            Headers requestHeaders = exchange.getRequestHeaders();
            received.add(new Received(
                    exchange.getRequestMethod(),
                    exchange.getRequestURI().toString(),
                    Map.copyOf(requestHeaders),
                    exchange.getRemoteAddress().getPort()));
            connections.add(exchange.getRemoteAddress().getPort());
            MessageDigest sha256 = sha256();
            long bytes = 0;
            byte[] buffer = new byte[64 * 1024];
            try (InputStream body = exchange.getRequestBody()) {
                for (int read; (read = body.read(buffer)) > 0; ) {
                    sha256.update(buffer, 0, read);
                    bytes += read;
                }
            }
            String path = exchange.getRequestURI().getPath();
            Headers answer = exchange.getResponseHeaders();
            answer.set("X-Upstream-Path", exchange.getRequestURI().toString());
            answer.set("X-Body-Bytes", Long.toString(bytes));
            answer.set("X-Body-Sha256", HexFormat.of().formatHex(sha256.digest()));
            answer.set("Keep-Alive", "timeout=60"); // hop-by-hop: must not reach the client
            String query = exchange.getRequestURI().getQuery();
            if (query != null && query.startsWith("used=")) {
                answer.set("X-Tokens-Used", query.substring("used=".length()));
            }
            if (path.equals("/slow")) {
                slow.await(30, TimeUnit.SECONDS);
            }
            if (path.startsWith("/status/")) {
                exchange.sendResponseHeaders(Integer.parseInt(path.substring("/status/".length())), -1);
                return;
            }
            if (path.startsWith("/bytes/") || path.startsWith("/chunked/")) {
                long size = Long.parseLong(path.substring(path.lastIndexOf('/') + 1));
                boolean head = exchange.getRequestMethod().equals("HEAD");
                exchange.sendResponseHeaders(200, path.startsWith("/bytes/") && !head ? size : head ? -1 : 0);
                if (head) {
                    return;
                }
                try (OutputStream out = exchange.getResponseBody()) {
                    for (long left = size; left > 0; left -= buffer.length) {
                        int chunk = (int) Math.min(buffer.length, left);
                        out.write(buffer, 0, chunk);
                        bytesWritten.addAndGet(chunk);
                    }
                }
                return;
            }
            byte[] body = ("upstream saw " + exchange.getRequestMethod() + " " + exchange.getRequestURI())
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        release();
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
}
