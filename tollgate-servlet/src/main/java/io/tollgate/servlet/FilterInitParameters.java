package io.tollgate.servlet;

import io.tollgate.InMemoryRateLimiter;
import io.tollgate.RateLimiter;
import io.tollgate.http.RequestLimiterConfig;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Reads the {@link TollgateFilter}'s init parameters {@code config} (a rules file, as a path or {@code
 * classpath:NAME}) and {@code limiter} ({@code memory}, or {@code attribute:NAME} for a {@link RateLimiter} the
 * application put in the servlet context), each error a {@link ServletException} naming the parameter.
 */
final class FilterInitParameters {

    private static final String CLASSPATH = "classpath:";
    private static final String ATTRIBUTE = "attribute:";

    private FilterInitParameters() {}

    /** Reads the rules file at {@code location}. */
    static RequestLimiterConfig config(String location) throws ServletException {
        try {
            if (location.startsWith(CLASSPATH)) {
                String name = location.substring(CLASSPATH.length()).replaceFirst("^/", "");
                ClassLoader loader = Thread.currentThread().getContextClassLoader();
                try (InputStream in =
                        (loader == null ? TollgateFilter.class.getClassLoader() : loader).getResourceAsStream(name)) {
                    if (in == null) {
                        throw new ServletException("init parameter 'config': no class path resource '" + name + "'");
                    }
                    return RequestLimiterConfig.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), name);
                }
            }
            return RequestLimiterConfig.load(Path.of(location));
        } catch (IOException e) {
            throw new ServletException("init parameter 'config': cannot read '" + location + "': " + e, e);
        } catch (IllegalArgumentException e) {
            throw new ServletException("init parameter 'config': " + e.getMessage(), e);
        }
    }

    /** Returns the limiter that {@code limiter} names. */
    static RateLimiter limiter(FilterConfig filterConfig, String limiter) throws ServletException {
        if (limiter.equals("memory")) {
            return InMemoryRateLimiter.create();
        }
        if (limiter.startsWith(ATTRIBUTE)) {
            String name = limiter.substring(ATTRIBUTE.length()).strip();
            Object value = filterConfig.getServletContext().getAttribute(name);
            if (value instanceof RateLimiter rateLimiter) {
                return rateLimiter;
            }
            throw new ServletException("init parameter 'limiter': servlet context attribute '" + name + "' "
                    + (value == null ? "is not set" : "is a " + value.getClass().getName() + ", not a RateLimiter"));
        }
        throw new ServletException("init parameter 'limiter' must be memory or attribute:NAME, was '" + limiter + "'");
    }
}
