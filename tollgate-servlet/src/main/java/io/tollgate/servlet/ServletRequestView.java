package io.tollgate.servlet;

import io.tollgate.http.HttpRequestView;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A servlet request as {@link HttpRequestView} sees it: what {@link TollgateFilter} decides, and what code that
 * decides a request outside the filter passes to {@code RequestLimiter.decide}, such as the starter's {@code
 * @RateLimit} on a controller method or a servlet of one's own. Lives as long as the request; not thread-safe.
 */
public final class ServletRequestView implements HttpRequestView {

    private final HttpServletRequest request;

    /**
     * Views {@code request}.
     *
     * @throws NullPointerException if request is null
     */
    public ServletRequestView(HttpServletRequest request) {
        this.request = Objects.requireNonNull(request, "request");
    }

    @Override
    public String method() {
        return request.getMethod();
    }

    /**
     * The servlet path and path info: the container has decoded and normalized them, relative to the
     * context path, for its own mapping of the request to a servlet, so rules see what the application sees.
     */
    @Override
    public String path() {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
        return path.isEmpty() ? "/" : path;
    }

    @Override
    public String host() {
        String host = request.getServerName();
        return host == null ? null : host.toLowerCase(Locale.ROOT);
    }

    @Override
    public List<String> headers(String name) {
        Enumeration<String> values = request.getHeaders(name);
        if (values == null || !values.hasMoreElements()) {
            return List.of();
        }
        List<String> list = new ArrayList<>(1);
        while (values.hasMoreElements()) {
            list.add(values.nextElement());
        }
        return list;
    }

    @Override
    public String header(String name) {
        return request.getHeader(name);
    }

    /**
     * Reads the query string itself rather than {@code getParameter}, which would consume a form body that
     * the application means to read.
     */
    @Override
    public String queryParameter(String name) {
        return HttpRequestView.queryParameter(request.getQueryString(), name);
    }

    @Override
    public String remoteAddress() {
        return request.getRemoteAddr();
    }

    @Override
    public String principal() {
        Principal principal = request.getUserPrincipal();
        return principal == null ? null : principal.getName();
    }
}
