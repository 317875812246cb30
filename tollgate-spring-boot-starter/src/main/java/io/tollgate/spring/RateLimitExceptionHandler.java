package io.tollgate.spring;

import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Answers a {@link RateLimitExceededException} in a WebFlux application as the filter answers a refused
 * request: the configured status, {@code Retry-After}, the rate-limit header fields and the problem body; and
 * a call that {@link RateLimit @RateLimit} rejects for a missing key, with its status and a problem body. The
 * WebFlux counterpart of {@link RateLimitExceptionResolver}; it runs before Spring Boot's error handler
 * (order -1). Thread-safe.
 */
public final class RateLimitExceptionHandler implements WebExceptionHandler, Ordered {

    /** The order: before Spring Boot's {@code ErrorWebExceptionHandler}, at -1. */
    public static final int ORDER = -2;

    private final Supplier<RequestLimiter> requests;

    /**
     * Answers refusals as {@code requests} writes them.
     *
     * @throws NullPointerException if requests is null
     */
    public RateLimitExceptionHandler(RequestLimiter requests) {
        Objects.requireNonNull(requests, "requests");
        this.requests = () -> requests;
    }

    /** Answers refusals as the request limiter in force writes them. */
    RateLimitExceptionHandler(Supplier<RequestLimiter> requests) {
        this.requests = requests;
    }

    /**
     * Writes the refusal for a {@link RateLimitExceededException} or a rejected missing key; passes every
     * other failure on, as does a response already committed.
     */
    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
        RequestDecision decision;
        if (failure instanceof RateLimitExceededException refused) {
            decision = requests.get().respond(refused.outcomes());
        } else if (failure instanceof MissingRateLimitKeyException missing) {
            decision = missing.answer();
        } else {
            return Mono.error(failure);
        }
        if (exchange.getResponse().isCommitted()) {
            return Mono.error(failure);
        }
        return ReactiveResponses.write(exchange.getResponse(), decision);
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
