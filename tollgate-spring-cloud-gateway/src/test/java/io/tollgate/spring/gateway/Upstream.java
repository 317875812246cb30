package io.tollgate.spring.gateway;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/** The service behind the gateway: answers 200 with the path it was asked for, on a free loopback port. */
final class Upstream implements AutoCloseable {

    private final HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();

    private Upstream(HttpServer server) {
        this.server = server;
    }

    static Upstream start() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        Upstream upstream = new Upstream(server);
        server.createContext("/", exchange -> {
            upstream.requests.incrementAndGet();
            byte[] body = ("upstream saw " + exchange.getRequestURI().getPath()).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return upstream;
    }

    /** Starts one, for a static field. */
    static Upstream startOrFail() {
        try {
            return start();
        } catch (IOException e) {
            throw new UncheckedIOException("the upstream could not start", e);
        }
    }

    String uri() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** How many requests reached it. */
    int requests() {
        return requests.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
