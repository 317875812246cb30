package io.tollgate.server;

import io.tollgate.TimeSource;
import io.tollgate.redis.internal.store.RedisStoreProvider;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

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

    /**
     * What the servers of this test JVM have warmed up: each store's paths, and Envoy's service on Redis. The first
     * server of each warms up as production does; the JIT's code then serves every later one, which starts
     * without its warm-up ({@code server.warm-up: false}), ready in milliseconds instead of seconds. Without
     * this first warm-up, a test's first decisions on Redis run cold and may outlast a budget of 50 ms. Envoy's
     * service in memory, where no decision has a budget to outlast, is not warmed up: its warm-up's 16 000 calls
     * and the wait for the compiler took 17 s of this JVM.
     */
    private static final Set<String> WARMED = ConcurrentHashMap.newKeySet();

    /**
     * Starts a server from YAML text on a free port, warmed up only where no server of this JVM warmed up its
     * paths before.
     */
    static RunningServer start(String yaml) throws Exception {
        return new RunningServer(TollgateServer.start(warmedOnce(config(yaml))));
    }

    /** Starts a server that warms up before it says it is ready, as the server does unless its file says. */
    static RunningServer startWarm(String yaml) throws Exception {
        return new RunningServer(TollgateServer.start(config(yaml).withWarmUp(true)));
    }

    /** Starts a server that says it is ready without warming up, as {@code server.warm-up: false} says. */
    static RunningServer startCold(String yaml) throws Exception {
        return new RunningServer(TollgateServer.start(config(yaml).withWarmUp(false)));
    }

    /** Starts a server on a configuration as it is (read from a file, for reloads). */
    static RunningServer start(ServerConfig config) throws Exception {
        return new RunningServer(TollgateServer.start(warmedOnce(config)));
    }

    static RunningServer start(String yaml, TimeSource clock) throws Exception {
        return new RunningServer(TollgateServer.start(warmedOnce(config(yaml)), clock));
    }

    private static ServerConfig config(String yaml) {
        return ServerConfig.parse(yaml, "test.yaml").withPort(0);
    }

    /**
     * The configuration with its warm-up on only if no server of this JVM warmed up the same paths (Envoy's service
     * counted on Redis only).
     */
    private static ServerConfig warmedOnce(ServerConfig config) {
        boolean redis = config.store() instanceof RedisStoreProvider.Settings;
        if (!redis && config.envoy() != null) {
            return config.withWarmUp(false); // its warm-up would run Envoy's calls too
        }
        return config.withWarmUp(WARMED.add((redis ? "redis" : "memory") + (config.envoy() != null ? "+envoy" : "")));
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
        return send(json(request, headers).build());
    }

    /** The request declared JSON, as the decision API wants it, unless {@code headers} declare a type of their own. */
    private static HttpRequest.Builder json(HttpRequest.Builder request, String... headers) {
        for (int i = 0; i < headers.length; i += 2) {
            if (headers[i].equalsIgnoreCase("Content-Type")) {
                return request;
            }
        }
        return request.header("Content-Type", "application/json");
    }

    HttpResponse<String> get(String path, String... headers) {
        return send(request(path, headers).GET().build());
    }

    HttpResponse<String> post(String path, String body, String... headers) {
        HttpRequest.Builder request = request(path, headers).POST(HttpRequest.BodyPublishers.ofString(body));
        return send(request.build());
    }

    /** A request to {@code path} of the public port; declared JSON where the path is the decision API's. */
    HttpRequest.Builder request(String path, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(20));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return path.startsWith("/v1/check") || path.startsWith("/v1/charge") ? json(request, headers) : request;
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
