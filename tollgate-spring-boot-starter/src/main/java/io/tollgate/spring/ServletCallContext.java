package io.tollgate.spring;

import io.tollgate.http.HttpRequestView;
import io.tollgate.http.RequestDecision;
import io.tollgate.servlet.ServletRequestView;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * The servlet request that the calling thread serves, for {@link RateLimit @RateLimit} on a method that does
 * not return a reactive type. A class of its own so that an application without the Servlet API (WebFlux
 * alone) never loads it.
 */
final class ServletCallContext implements RateLimitInterceptor.CallContext {

    private final HttpServletRequest request;
    private final HttpServletResponse response;

    private ServletCallContext(HttpServletRequest request, HttpServletResponse response) {
        this.request = request;
        this.response = response;
    }

    /** Returns the calling thread's request, or null if it serves none. */
    static ServletCallContext current() {
        if (RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes servlet) {
            return new ServletCallContext(servlet.getRequest(), servlet.getResponse());
        }
        return null;
    }

    @Override
    public HttpRequestView view() {
        return new ServletRequestView(request);
    }

    @Override
    public Object request() {
        return request;
    }

    @Override
    public void addHeaders(RequestDecision decision) {
        if (response != null) {
            addHeaders(response, decision);
        }
    }

    /** Sets the decision's header fields; several limiters' rate-limit fields add up. */
    static void addHeaders(HttpServletResponse response, RequestDecision decision) {
        decision.headers().forEach((name, value) -> {
            if (RateLimitInterceptor.LIST_FIELDS.contains(name)) {
                response.addHeader(name, value);
            } else {
                response.setHeader(name, value);
            }
        });
    }
}
