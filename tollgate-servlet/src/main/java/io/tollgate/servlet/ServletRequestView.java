package io.tollgate.servlet;

import io.tollgate.http.HttpRequestView;
import io.tollgate.http.NormalPath;
import io.tollgate.http.PathSettings;
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
    private String path;

    /**
     * Views {@code request}, whose path is read by {@link PathSettings#DEFAULT}; one those settings refuse is seen
     * as the container mapped it (its servlet path and path info).
     *
     * @throws NullPointerException if request is null
     */
    public ServletRequestView(HttpServletRequest request) {
        this.request = Objects.requireNonNull(request, "request");
    }

    /**
     * Views {@code request}, whose path within the application {@link #normalPath} has read.
     *
     * @throws NullPointerException if an argument is null
     */
    public ServletRequestView(HttpServletRequest request, NormalPath path) {
        this.request = Objects.requireNonNull(request, "request");
        this.path = Objects.requireNonNull(path, "path").decoded();
    }

    /**
     * Reads the path of {@code request} within its application, as sent (its request URI without the context path),
     * into its normal form by {@code settings}: what rules match, whatever form of it the client sent.
     *
     * @throws IllegalArgumentException naming what is wrong, for a path that {@link NormalPath} refuses
     * @throws NullPointerException if an argument is null
     */
    public static NormalPath normalPath(HttpServletRequest request, PathSettings settings) {
        Objects.requireNonNull(settings, "settings");
        String uri = request.getRequestURI();
        String context = request.getContextPath();
        if (uri == null || uri.isEmpty()) {
            uri = "/";
        }
        if (context == null || context.isEmpty()) {
            return NormalPath.parse(uri, settings);
        }
        if (uri.startsWith(context)) {
            String within = uri.substring(context.length());
            return NormalPath.parse(within.startsWith("/") ? within : "/" + within, settings);
        }
        // The client wrote the context path in another form, such as //app or /%61pp: take its normal form off
        NormalPath whole = NormalPath.parse(uri, settings);
        String prefix = NormalPath.parse(context, settings).encoded();
        String encoded = whole.encoded();
        if (encoded.startsWith(prefix)
                && (encoded.length() == prefix.length() || encoded.charAt(prefix.length()) == '/')) {
            String within = encoded.substring(prefix.length());
            return NormalPath.parse(within.isEmpty() ? "/" : within, settings);
        }
        return whole;
    }

    @Override
    public String method() {
        return request.getMethod();
    }

    /**
     * The path within the application in normal form, decoded ({@link NormalPath#decoded()}): {@code //api/x}, {@code
     * /api/./x} and {@code /api/x;v=1} are all {@code /api/x}, as containers and frameworks route them.
     */
    @Override
    public String path() {
        if (path == null) {
            try {
                path = normalPath(request, PathSettings.DEFAULT).decoded();
            } catch (IllegalArgumentException refused) {
                String servletPath = request.getServletPath();
                String pathInfo = request.getPathInfo();
                String mapped = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
                path = mapped.isEmpty() ? "/" : mapped;
            }
        }
        return path;
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
