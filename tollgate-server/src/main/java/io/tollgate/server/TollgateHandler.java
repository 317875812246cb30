package io.tollgate.server;

import java.util.Map;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

/**
 * Routes every request: {@code /healthz}, {@code /readyz}, {@code /metrics} and {@code /v1/check} are the
 * server's own; everything else goes to the proxy, or, with no upstream, is a 404. Each answer is timed.
 * {@code /readyz} answers 503 until the server is warm, then as the store answers.
 */
final class TollgateHandler extends Handler.Abstract {

    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final CheckApi checks;
    private final LimitingProxy proxy;
    private final StoreMonitor store;
    private final ServerMetrics metrics;
    private volatile boolean ready;

    TollgateHandler(CheckApi checks, LimitingProxy proxy, StoreMonitor store, ServerMetrics metrics) {
        this.checks = checks;
        this.proxy = proxy;
        this.store = store;
        this.metrics = metrics;
        if (proxy != null) {
            addBean(proxy);
        }
    }

    /** Says that the server is warm: {@code /readyz} follows the store from now on. */
    void ready() {
        ready = true;
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
        String handler = switch (path) {
            case "/v1/check" -> "check";
            case "/healthz", "/readyz" -> "health";
            case "/metrics" -> "metrics";
            default -> proxy != null ? "proxy" : "none";
        };
        Callback timed = timed(handler, response, callback);
        switch (handler) {
            case "check" -> checks.handle(request, response, timed);
            case "health" -> health(path, request, response, timed);
            case "metrics" -> {
                if (onlyGet(request, response, timed)) {
                    Responses.text(response, timed, 200, PROMETHEUS_TEXT, metrics.scrape());
                }
            }
            case "proxy" -> proxy.handle(request, response, timed);
            default ->
                Responses.problem(
                        response,
                        timed,
                        404,
                        "No such endpoint: " + path + ". This server has no upstream; its endpoints are /v1/check,"
                                + " /healthz, /readyz and /metrics.");
        }
        return true;
    }

    private void health(String path, Request request, Response response, Callback callback) {
        if (!onlyGet(request, response, callback)) {
            return;
        }
        if (path.equals("/healthz")) {
            Responses.json(response, callback, 200, Map.of("Cache-Control", "no-store"), "{\"status\":\"up\"}");
            return;
        }
        if (!ready) {
            Responses.problem(response, callback, 503, "The server is warming up.");
            return;
        }
        store.check().whenComplete((unavailable, failure) -> {
            if (unavailable.isEmpty()) {
                Responses.json(response, callback, 200, Map.of("Cache-Control", "no-store"), "{\"status\":\"ready\"}");
            } else {
                Responses.problem(response, callback, 503, "The store is unavailable: " + unavailable.get());
            }
        });
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
