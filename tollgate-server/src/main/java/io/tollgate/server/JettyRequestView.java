package io.tollgate.server;

import io.tollgate.http.HttpRequestView;
import java.util.List;
import java.util.Locale;
import org.eclipse.jetty.server.Request;

/** A Jetty request as {@link HttpRequestView} sees it. Lives as long as one request. */
final class JettyRequestView implements HttpRequestView {

    private final Request request;

    JettyRequestView(Request request) {
        this.request = request;
    }

    @Override
    public String method() {
        return request.getMethod();
    }

    /** Jetty's decoded, normalized path: the one its own routing would use. */
    @Override
    public String path() {
        String path = Request.getPathInContext(request);
        return path == null || path.isEmpty() ? "/" : path;
    }

    @Override
    public String host() {
        String host = Request.getServerName(request);
        return host == null ? null : host.toLowerCase(Locale.ROOT);
    }

    @Override
    public List<String> headers(String name) {
        return request.getHeaders().getValuesList(name);
    }

    @Override
    public String header(String name) {
        return request.getHeaders().get(name);
    }

    @Override
    public String queryParameter(String name) {
        return HttpRequestView.queryParameter(request.getHttpURI().getQuery(), name);
    }

    @Override
    public String remoteAddress() {
        return Request.getRemoteAddr(request);
    }

    /** The server authenticates nobody. */
    @Override
    public String principal() {
        return null;
    }
}
