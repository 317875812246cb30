package io.tollgate.server;

import io.tollgate.http.RequestDecision;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The reverse proxy: each request is first decided by the routes that match it; an allowed one goes to the
 * upstream with its method, path, query, headers and body (streamed both ways, never held whole), and its
 * answer comes back with the rate-limit header fields added; a refused one is answered at once. A request
 * that matches no route is proxied unlimited.
 *
 * <p>Hop-by-hop headers are not forwarded. {@code X-Forwarded-For}, {@code -Proto} and {@code -Host} are
 * set for the upstream: a trusted proxy's values are kept and the peer appended; anybody else's are
 * replaced, so that the upstream can believe them. Connections to the upstream are kept alive and pooled.
 * An upstream that is down answers 502, one that does not answer in time 504, both as problems.
 */
final class LimitingProxy extends ProxyHandler.Reverse {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    private final Supplier<Limits> limits;
    private final Duration timeout;
    private final ServerMetrics metrics;

    LimitingProxy(URI upstream, Supplier<Limits> limits, Duration timeout, ServerMetrics metrics) {
        super(request -> target(upstream, request));
        this.limits = limits;
        this.timeout = timeout;
        this.metrics = metrics;
        setViaHost("tollgate");
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        CompletionStage<RequestDecision> pending;
        try {
            pending = limits.get().requests().decide(new JettyRequestView(request));
        } catch (RuntimeException e) {
            Responses.limiterFailed(response, callback, e);
            return true;
        }
        Responses.whenDecided(request, pending, (decision, failure) -> {
            if (failure != null) {
                Responses.limiterFailed(response, callback, failure);
            } else if (decision.allowed()) {
                decision.headers()
                        .forEach((name, value) -> response.getHeaders().put(name, value));
                forward(
                        request,
                        response,
                        decision.settlesAfterResponse() ? settling(decision, response, callback) : callback);
            } else {
                Responses.write(response, callback, decision);
                limits.get().requests().finish(decision, decision.status(), decision.headers()::get);
            }
        });
        return true;
    }

    /**
     * Returns {@code callback}, settling the cost of rules that take it after the response once the answer
     * has gone to the client, with the status and header fields the client got (the upstream's, or this
     * proxy's 502 or 504), and giving back the slots of concurrency limits the request holds. An answer cut
     * off midway is settled as the upstream began it.
     */
    private Callback settling(RequestDecision decision, Response response, Callback callback) {
        return new Callback() {
            @Override
            public void succeeded() {
                settle();
                callback.succeeded();
            }

            @Override
            public void failed(Throwable failure) {
                settle();
                callback.failed(failure);
            }

            @Override
            public InvocationType getInvocationType() {
                return callback.getInvocationType();
            }

            private void settle() {
                limits.get().requests().finish(decision, response.getStatus(), response.getHeaders()::get);
            }
        };
    }

    private void forward(Request request, Response response, Callback callback) {
        try {
            super.handle(request, response, callback);
        } catch (IllegalArgumentException e) {
            // Jetty took the request, but its URI is not one an HTTP client will send, such as %zz in the query
            Responses.problem(response, callback, 400, "The request's URI cannot be forwarded: " + e.getMessage());
        } catch (RuntimeException e) {
            Responses.limiterFailed(response, callback, e);
        }
    }

    @Override
    protected HttpClient newHttpClient() {
        // HTTP/1.1 only: the dynamic transport's protocol negotiation costs on every request
        ClientConnector connector = new ClientConnector();
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("tollgate-upstream");
        connector.setExecutor(threads);
        HttpClient client = new HttpClient(new HttpClientTransportOverHTTP(connector));
        client.setConnectTimeout(Math.min(timeout.toMillis(), 5_000));
        client.setIdleTimeout(Math.max(timeout.toMillis(), 30_000));
        client.setMaxConnectionsPerDestination(1_024);
        return client;
    }

    @Override
    protected org.eclipse.jetty.client.Request newProxyToServerRequest(Request request, HttpURI target) {
        return super.newProxyToServerRequest(request, target).timeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    protected void addProxyHeaders(Request request, org.eclipse.jetty.client.Request upstream) {
        addViaHeader(request, upstream);
        String peer = Request.getRemoteAddr(request);
        boolean trusted = limits.get().config().clientIps().isTrustedProxy(peer);
        String forwardedFor = request.getHeaders().get("X-Forwarded-For");
        String proto = request.getHeaders().get("X-Forwarded-Proto");
        String host = request.getHeaders().get("X-Forwarded-Host");
        upstream.headers(headers -> {
            headers.put("X-Forwarded-For", trusted && forwardedFor != null ? forwardedFor + ", " + peer : peer);
            headers.put(
                    "X-Forwarded-Proto",
                    trusted && proto != null ? proto : request.getHttpURI().getScheme());
            String requestHost = request.getHeaders().get(HttpHeader.HOST);
            if (trusted && host != null) {
                headers.put("X-Forwarded-Host", host);
            } else if (requestHost != null) {
                headers.put("X-Forwarded-Host", requestHost);
            } else {
                headers.remove("X-Forwarded-Host");
            }
            if (!trusted) {
                headers.remove(HttpHeader.FORWARDED); // a client's own claim; the X-Forwarded-* above say it
            }
        });
    }

    @Override
    protected void onProxyToClientResponseComplete(
            Request request,
            org.eclipse.jetty.client.Request upstream,
            org.eclipse.jetty.client.Response answer,
            Response response,
            Callback callback) {
        metrics.upstream(Integer.toString(answer.getStatus()));
        super.onProxyToClientResponseComplete(request, upstream, answer, response, callback);
    }

    @Override
    protected void onServerToProxyResponseFailure(
            Request request,
            org.eclipse.jetty.client.Request upstream,
            org.eclipse.jetty.client.Response answer,
            Response response,
            Callback callback,
            Throwable failure) {
        boolean timedOut = failure instanceof TimeoutException;
        metrics.upstream(timedOut ? "timeout" : "unreachable");
        if (response.isCommitted()) {
            callback.failed(failure); // part of the answer is on its way: all we can do is cut it off
            return;
        }
        response.reset();
        if (timedOut) {
            Responses.problem(
                    response, callback, 504, "The upstream did not answer within " + timeout.toMillis() + " ms.");
        } else {
            Responses.problem(response, callback, 502, "The upstream could not be reached: " + describe(failure));
        }
    }

    /** Returns the upstream URI for a request: the upstream's path prefix, the request's path and query. */
    private static HttpURI target(URI upstream, Request request) {
        String prefix = upstream.getRawPath() == null ? "" : upstream.getRawPath();
        if (prefix.endsWith("/")) {
            prefix = prefix.substring(0, prefix.length() - 1);
        }
        HttpURI uri = request.getHttpURI();
        return HttpURI.build()
                .scheme(upstream.getScheme())
                .host(upstream.getHost())
                .port(upstream.getPort())
                .path(prefix + uri.getPath())
                .query(uri.getQuery())
                .asImmutable();
    }

    private static String describe(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String message = cause.getMessage();
        return cause.getClass().getSimpleName() + (message == null ? "" : " (" + message + ")");
    }
}
