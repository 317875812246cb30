package io.tollgate.server;

import io.tollgate.TimeSource;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A Tollgate server started in this JVM on a free port from YAML text, and a real HTTP client for it. */
final class RunningServer implements AutoCloseable {

    private final TollgateServer server;
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private RunningServer(TollgateServer server) {
        this.server = server;
    }

    static RunningServer start(String yaml) throws Exception {
        return new RunningServer(TollgateServer.start(config(yaml)));
    }

    /** Starts a server on a configuration as it is (read from a file, for reloads). */
    static RunningServer start(ServerConfig config) throws Exception {
        return new RunningServer(TollgateServer.start(config));
    }

    static RunningServer start(String yaml, TimeSource clock) throws Exception {
        return new RunningServer(TollgateServer.start(config(yaml), clock));
    }

    private static ServerConfig config(String yaml) {
        return ServerConfig.parse(yaml, "test.yaml").withPort(0);
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }

    TollgateServer server() {
        return server;
    }

    HttpClient client() {
        return client;
    }

    /** Sends {@code method} to {@code path} on the management port. */
    HttpResponse<String> management(String method, String path, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        server.managementUri().resolve(path))
                .timeout(Duration.ofSeconds(20))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (headers.length > 0) {
            request.headers(headers);
        }
        return send(request.build());
    }

    /**
     * Posts {@code body} to {@code path} of the decision API: on the decision port ({@code server.decision-port})
     * beside a proxy, else on the public port.
     */
    HttpResponse<String> decision(String path, String body, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        server.decisionUri() != null ? server.decisionUri().resolve(path) : uri(path))
                .timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return send(request.build());
    }

    HttpResponse<String> get(String path, String... headers) {
        return send(request(path, headers).GET().build());
    }

    HttpResponse<String> post(String path, String body, String... headers) {
        return send(request(path, headers)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    HttpRequest.Builder request(String path, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(20));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return request;
    }

    HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
