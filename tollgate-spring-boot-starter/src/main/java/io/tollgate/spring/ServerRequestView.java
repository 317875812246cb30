package io.tollgate.spring;

import io.tollgate.http.HttpRequestView;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * A WebFlux request as {@link HttpRequestView} sees it. Lives as long as the request; not thread-safe.
 */
final class ServerRequestView implements HttpRequestView {

    private final ServerHttpRequest request;
    private final String principal;

    /**
     * @param principal the name of the exchange's principal, or null for none: WebFlux finds it
     *     asynchronously, so the caller looks it up first
     */
    ServerRequestView(ServerHttpRequest request, String principal) {
        this.request = request;
        this.principal = principal;
    }

    @Override
    public String method() {
        return request.getMethod().name();
    }

    /**
     * The path within the application, decoded segment by segment and without matrix parameters, as
     * WebFlux matches it to a handler, so rules see what the application sees.
     */
    @Override
    public String path() {
        StringBuilder path = new StringBuilder();
        for (PathContainer.Element element :
                request.getPath().pathWithinApplication().elements()) {
            path.append(
                    element instanceof PathContainer.PathSegment segment ? segment.valueToMatch() : element.value());
        }
        return path.isEmpty() ? "/" : path.toString();
    }

    @Override
    public String host() {
        String host = request.getURI().getHost();
        return host == null ? null : host.toLowerCase(Locale.ROOT);
    }

    @Override
    public List<String> headers(String name) {
        List<String> values = request.getHeaders().get(name);
        return values == null ? List.of() : values;
    }

    @Override
    public String header(String name) {
        return request.getHeaders().getFirst(name);
    }

    @Override
    public String queryParameter(String name) {
        return HttpRequestView.queryParameter(request.getURI().getRawQuery(), name);
    }

    @Override
    public String remoteAddress() {
        InetSocketAddress remote = request.getRemoteAddress();
        if (remote == null) {
            return null;
        }
        return remote.getAddress() == null
                ? remote.getHostString()
                : remote.getAddress().getHostAddress();
    }

    @Override
    public String principal() {
        return principal;
    }
}
