package io.tollgate.spring;

import io.tollgate.http.HttpRequestView;
import io.tollgate.http.NormalPath;
import io.tollgate.http.PathSettings;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * A WebFlux request as {@link HttpRequestView} sees it. Lives as long as the request; not thread-safe.
 */
final class ServerRequestView implements HttpRequestView {

    private final ServerHttpRequest request;
    private final String path;
    private final String principal;

    /**
     * @param path the request's path within the application, read by {@link #normalPath}
     * @param principal the name of the exchange's principal, or null for none: WebFlux finds it
     *     asynchronously, so the caller looks it up first
     */
    ServerRequestView(ServerHttpRequest request, NormalPath path, String principal) {
        this.request = request;
        this.path = path.decoded();
        this.principal = principal;
    }

    /**
     * Views {@code request} with its path read by {@link PathSettings#DEFAULT}, or as sent where they refuse it: for
     * {@code @RateLimit}, which the handler's own mapping has matched already.
     */
    ServerRequestView(ServerHttpRequest request, String principal) {
        this.request = request;
        String decoded;
        try {
            decoded = normalPath(request, PathSettings.DEFAULT).decoded();
        } catch (IllegalArgumentException refused) {
            decoded = request.getPath().pathWithinApplication().value();
        }
        this.path = decoded;
        this.principal = principal;
    }

    /**
     * Reads the path of {@code request} within its application, as sent, into its normal form by {@code settings}.
     *
     * @throws IllegalArgumentException naming what is wrong, for a path that {@link NormalPath} refuses
     */
    static NormalPath normalPath(ServerHttpRequest request, PathSettings settings) {
        String within = request.getPath().pathWithinApplication().value();
        return NormalPath.parse(within.isEmpty() ? "/" : within, settings);
    }

    @Override
    public String method() {
        return request.getMethod().name();
    }

    /**
     * The path within the application in normal form, decoded ({@link NormalPath#decoded()}): {@code //api/x}, {@code
     * /api/./x} and {@code /api/x;v=1} are all {@code /api/x}.
     */
    @Override
    public String path() {
        return path;
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
