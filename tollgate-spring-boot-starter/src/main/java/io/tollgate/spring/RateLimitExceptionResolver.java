package io.tollgate.spring;

import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Supplier;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers a {@link RateLimitExceededException} from a controller as the filter answers a refused request:
 * the configured status, {@code Retry-After}, the rate-limit header fields and the problem body; and a call
 * that {@link RateLimit @RateLimit} rejects for a missing key, with its status and a problem body. Runs
 * before Spring MVC's own resolvers. Thread-safe.
 */
public final class RateLimitExceptionResolver implements HandlerExceptionResolver, Ordered {

    private final Supplier<RequestLimiter> requests;

    /** Answers refusals as {@code requests} writes them. */
    public RateLimitExceptionResolver(RequestLimiter requests) {
        this(() -> requests);
    }

    /** Answers refusals as the request limiter in force writes them. */
    RateLimitExceptionResolver(Supplier<RequestLimiter> requests) {
        this.requests = requests;
    }

    /**
     * Writes the refusal for a {@link RateLimitExceededException} or a rejected missing key; leaves every
     * other exception alone.
     */
    @Override
    public ModelAndView resolveException(
            HttpServletRequest request, HttpServletResponse response, Object handler, Exception exception) {
        if (response.isCommitted()) {
            return null;
        }
        RequestDecision decision;
        if (exception instanceof RateLimitExceededException refused) {
            decision = requests.get().respond(refused.outcomes());
        } else if (exception instanceof MissingRateLimitKeyException missing) {
            decision = missing.answer();
        } else {
            return null;
        }
        response.setStatus(decision.status());
        ServletCallContext.addHeaders(response, decision);
        byte[] body = decision.body();
        response.setContentLength(body.length);
        try {
            response.getOutputStream().write(body);
        } catch (IOException e) {
            throw new UncheckedIOException("could not answer a rate-limited request", e);
        }
        return new ModelAndView();
    }

    /** Returns the highest precedence, so that a refusal is never answered by another resolver first. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
