package io.tollgate.server;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

/**
 * Routes every request. Without a management port: {@code /healthz}, {@code /readyz}, {@code /metrics},
 * {@code /v1/check} and {@code /v1/charge} are the server's own; everything else goes to the proxy, or, with
 * no upstream, is a 404. With one, the public port forwards every path to the upstream, or with no upstream
 * serves the decision API ({@code /v1/check}, {@code /v1/charge}) only; the management port serves {@code /healthz}, {@code /readyz}, {@code /metrics} and the
 * admin API, to callers that send its bearer token when one is set. Each answer is timed. {@code /readyz}
 * answers 503 until the server is warm, then as the store answers.
 *
 * <p>Non-blocking: Jetty may call it on the thread that read the request, without handing the request to
 * another thread first (a hop that cost more than half of a {@code /healthz} answer). Everything it does
 * there is asynchronous or brief; the admin API and the Prometheus scrape, which may wait for the store or
 * take long, run on Jetty's thread pool.
 */
final class TollgateHandler extends Handler.Abstract.NonBlocking {

    private final Supplier<Limits> limits;
    private final LimitingProxy proxy;
    private final Readiness readiness;
    private final ServerMetrics metrics;
    private final AdminApi admin;
    private final Connector managementConnector;
    private final byte[] managementToken;

    /**
     * @param admin the admin API, or null without a management port
     * @param managementConnector the management port's connector, or null for none
     * @param managementToken the bearer token the management port requires, or null for none
     */
    TollgateHandler(
            Supplier<Limits> limits,
            LimitingProxy proxy,
            Readiness readiness,
            ServerMetrics metrics,
            AdminApi admin,
            Connector managementConnector,
            String managementToken) {
        this.limits = limits;
        this.proxy = proxy;
        this.readiness = readiness;
        this.metrics = metrics;
        this.admin = admin;
        this.managementConnector = managementConnector;
        this.managementToken = managementToken == null ? null : managementToken.getBytes(StandardCharsets.US_ASCII);
        if (proxy != null) {
            addBean(proxy);
        }
    }

    /** The proxy is called from here rather than from the handler tree, so it learns of the server here. */
    @Override
    public void setServer(Server server) {
        super.setServer(server);
        if (proxy != null) {
            proxy.setServer(server);
        }
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        String path = Request.getPathInContext(request);
        boolean onManagementPort =
                managementConnector != null && request.getConnectionMetaData().getConnector() == managementConnector;
        String handler = onManagementPort ? managementRoute(path) : publicRoute(path);
        Callback timed = timed(handler, response, callback);
        if (onManagementPort && !authorized(request)) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer realm=\"tollgate management\"");
            Responses.problem(
                    response,
                    timed,
                    401,
                    "The management port needs the bearer token of server.management-token: send Authorization:"
                            + " Bearer TOKEN.");
            return true;
        }
        switch (handler) {
            case "check" -> limits.get().checks().handle(request, response, timed);
            case "charge" -> limits.get().checks().handleCharge(request, response, timed);
            case "health" -> health(path, request, response, timed);
            case "metrics" -> {
                if (onlyGet(request, response, timed)) {
                    blocking(
                            timed,
                            () -> Responses.text(response, timed, 200, Responses.PROMETHEUS_TEXT, metrics.scrape()));
                }
            }
            case "admin" ->
                blocking(timed, () -> Responses.write(response, timed, admin.answer(request.getMethod(), path)));
            case "proxy" -> proxy.handle(request, response, timed);
            default -> Responses.problem(response, timed, 404, noSuchEndpoint(path, onManagementPort));
        }
        return true;
    }

    /** Runs work that may block on Jetty's thread pool, never on the thread that read the request. */
    private void blocking(Callback callback, Runnable work) {
        try {
            getServer().getThreadPool().execute(() -> {
                try {
                    work.run();
                } catch (RuntimeException e) {
                    callback.failed(e);
                }
            });
        } catch (RejectedExecutionException stopping) {
            callback.failed(stopping);
        }
    }

    private String publicRoute(String path) {
        return publicRoute(path, managementConnector != null, proxy != null);
    }

    /**
     * Returns the handler of {@code path} on the public port: {@code check}, {@code charge}, {@code health},
     * {@code metrics}, {@code proxy}, or {@code none}.
     */
    static String publicRoute(String path, boolean managementPort, boolean proxy) {
        if (managementPort) {
            return proxy ? "proxy" : decisionApiRoute(path);
        }
        return switch (path) {
            case "/v1/check" -> "check";
            case "/v1/charge" -> "charge";
            case "/healthz", "/readyz" -> "health";
            case "/metrics" -> "metrics";
            default -> proxy ? "proxy" : "none";
        };
    }

    private static String decisionApiRoute(String path) {
        return switch (path) {
            case "/v1/check" -> "check";
            case "/v1/charge" -> "charge";
            default -> "none";
        };
    }

    static String managementRoute(String path) {
        return switch (path) {
            case "/healthz", "/readyz" -> "health";
            case "/metrics" -> "metrics";
            default -> AdminApi.serves(path) ? "admin" : "none";
        };
    }

    private String noSuchEndpoint(String path, boolean onManagementPort) {
        return noSuchEndpoint(path, onManagementPort, managementConnector != null);
    }

    /** The detail of a 404 for {@code path}, saying which endpoints there are. */
    static String noSuchEndpoint(String path, boolean onManagementPort, boolean managementPort) {
        if (onManagementPort) {
            return "No such endpoint on the management port: " + path + ". Its endpoints are /healthz, /readyz,"
                    + " /metrics, " + AdminApi.POLICIES + ", " + AdminApi.RELOAD + " and " + AdminApi.BUCKETS
                    + "{policy}/{key}.";
        }
        if (managementPort) {
            return "No such endpoint: " + path + ". This server has no upstream; its public endpoints are /v1/check"
                    + " and /v1/charge (health, metrics and the admin API are on the management port).";
        }
        return "No such endpoint: " + path + ". This server has no upstream; its endpoints are /v1/check,"
                + " /v1/charge, /healthz, /readyz and /metrics.";
    }

    /** Whether the request carries the management token, if one is set; compared in constant time. */
    private boolean authorized(Request request) {
        if (managementToken == null) {
            return true;
        }
        String header = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        byte[] sent = header.substring(7).trim().getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(sent, managementToken);
    }

    private void health(String path, Request request, Response response, Callback callback) {
        if (onlyGet(request, response, callback)) {
            readiness.answer(path).thenAccept(answer -> Responses.write(response, callback, answer));
        }
    }

    private static boolean onlyGet(Request request, Response response, Callback callback) {
        if (request.getMethod().equals("GET") || request.getMethod().equals("HEAD")) {
            return true;
        }
        Responses.methodNotAllowed(request, response, callback, "GET", "HEAD");
        return false;
    }

    /** Returns {@code callback}, recording the answer's status and time when it completes. */
    private Callback timed(String handler, Response response, Callback callback) {
        long start = System.nanoTime();
        return new Callback.Nested(callback) {
            @Override
            public void succeeded() {
                metrics.answered(handler, response.getStatus(), System.nanoTime() - start);
                super.succeeded();
            }

            @Override
            public void failed(Throwable failure) {
                metrics.answered(
                        handler, response.isCommitted() ? response.getStatus() : 500, System.nanoTime() - start);
                super.failed(failure);
            }
        };
    }
}
