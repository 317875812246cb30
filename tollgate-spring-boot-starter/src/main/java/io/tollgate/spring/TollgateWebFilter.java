package io.tollgate.spring;

import io.tollgate.RateLimiter;
import io.tollgate.http.NormalPath;
import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import java.lang.System.Logger.Level;
import java.security.Principal;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * A WebFlux filter that enforces rate limits, as the servlet filter does: each request is decided by a
 * {@link RequestLimiter}; an allowed request continues down the chain with the {@code RateLimit-Policy} and
 * {@code RateLimit} header fields on its response, a refused one is answered at once with 429 (or the
 * configured status), {@code Retry-After} and an {@code application/problem+json} body.
 *
 * <p>It never blocks: the decision is asked for with {@link RateLimiter#tryAcquireAsync}, and a request
 * decided on Redis continues, once decided, on its own connection's event loop (Reactor Netty) or on
 * Reactor's parallel scheduler, never on the Redis client's thread. The principal, for rules keyed by it, is
 * the exchange's ({@code ServerWebExchange.getPrincipal()}), so run the filter after Spring Security's
 * (order -100), as the default order, -90, does. If the limiter itself fails (a bug, not a Redis outage,
 * which its failure policy answers), the request gets a 500 problem response and the failure is logged.
 *
 * <p>A rule with a {@link io.tollgate.http.ResponseCost} is settled with the response's status and header
 * fields when the response is committed; the slots of concurrency limits that a request holds are given back
 * when its answer has been written, has failed, or its client went away.
 *
 * <p>The Spring Boot starter registers it in a reactive web application; to use it without Boot, declare it
 * as a {@code WebFilter} bean. Thread-safe.
 */
public final class TollgateWebFilter implements WebFilter, Ordered {

    private static final System.Logger LOG = System.getLogger(TollgateWebFilter.class.getName());

    /** The default order: just after Spring Security's filter chain (-100). */
    public static final int DEFAULT_ORDER = -90;

    private volatile RequestLimiter requests;
    private final int order;
    private final List<String> urlPatterns;

    /**
     * Creates a filter that enforces {@code requests} on every path, at {@link #DEFAULT_ORDER}.
     *
     * @throws NullPointerException if requests is null
     */
    public TollgateWebFilter(RequestLimiter requests) {
        this(requests, DEFAULT_ORDER, List.of("/*"));
    }

    /**
     * @param urlPatterns servlet URL patterns ({@code /*}, {@code /api/*}, {@code *.json}, {@code /exact}),
     *     as {@code tollgate.filter.url-patterns} gives them to both filters
     */
    TollgateWebFilter(RequestLimiter requests, int order, List<String> urlPatterns) {
        this.requests = Objects.requireNonNull(requests, "requests");
        this.order = order;
        this.urlPatterns = List.copyOf(urlPatterns);
    }

    /**
     * Enforces {@code requests} from now on, such as rules read again after a refresh: each request is
     * decided by the old request limiter or the new one, never by a mix.
     *
     * @throws NullPointerException if requests is null
     */
    public void replace(RequestLimiter requests) {
        this.requests = Objects.requireNonNull(requests, "requests");
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        RequestLimiter limiter = requests;
        if (limiter.rules().isEmpty() && limiter.overload() == null) {
            return chain.filter(exchange);
        }
        NormalPath path;
        try {
            path = ServerRequestView.normalPath(exchange.getRequest(), limiter.paths());
        } catch (IllegalArgumentException refused) {
            if (!mapped(exchange.getRequest().getPath().pathWithinApplication().value())) {
                return chain.filter(exchange);
            }
            return ReactiveResponses.write(
                    exchange.getResponse(), RequestDecision.problem(400, "Bad Request: " + refused.getMessage()));
        }
        if (!mapped(path.decoded())) {
            return chain.filter(exchange);
        }
        return exchange.getPrincipal()
                .map(Principal::getName)
                .defaultIfEmpty("")
                .flatMap(principal -> decide(limiter, exchange, path, principal.isEmpty() ? null : principal))
                .onErrorResume(failure -> {
                    LOG.log(Level.WARNING, "rate limiter failed; answering 500", failure);
                    return Mono.just(RequestDecision.limiterFailed());
                })
                .flatMap(decision -> {
                    if (decision.settlesAfterResponse()) {
                        settleOnCommit(limiter, decision, exchange.getResponse());
                    }
                    if (!decision.allowed()) {
                        return ReactiveResponses.write(exchange.getResponse(), decision);
                    }
                    ReactiveResponses.addHeaders(exchange.getResponse().getHeaders(), decision);
                    if (decision.permits().isEmpty() && decision.overload() == null) {
                        return chain.filter(exchange);
                    }
                    // The slots, and the room under overload protection, are held until the answer has gone, or
                    // failed, or its client went away.
                    return chain.filter(exchange).doFinally(signal -> limiter.release(decision));
                });
    }

    /**
     * Settles the cost of rules that take it after the response when the response is committed: its status
     * and header fields are final then, whoever writes it (the handler, an error handler, this filter's
     * refusal). A response never committed, because its client went away, keeps the cost taken.
     */
    private static void settleOnCommit(RequestLimiter limiter, RequestDecision decision, ServerHttpResponse response) {
        response.beforeCommit(() -> {
            HttpStatusCode status = response.getStatusCode();
            limiter.settle(decision, status == null ? 200 : status.value(), response.getHeaders()::getFirst);
            return Mono.empty();
        });
    }

    private static Mono<RequestDecision> decide(
            RequestLimiter limiter, ServerWebExchange exchange, NormalPath path, String principal) {
        CompletableFuture<RequestDecision> pending;
        try {
            pending = limiter.decide(new ServerRequestView(exchange.getRequest(), path, principal))
                    .toCompletableFuture();
        } catch (RuntimeException e) {
            return Mono.error(e);
        }
        Mono<RequestDecision> decision = Mono.fromFuture(pending); // a done future completes it at once
        return pending.isDone() ? decision : decision.publishOn(ExchangeThreads.of(exchange));
    }

    /** Whether one of the servlet URL patterns maps the path, as a servlet container would map it. */
    private boolean mapped(String path) {
        for (String pattern : urlPatterns) {
            if (pattern.equals("/*") || pattern.equals("/")) {
                return true;
            }
            if (pattern.endsWith("/*")) {
                String prefix = pattern.substring(0, pattern.length() - 2);
                if (path.equals(prefix) || path.startsWith(prefix + "/")) {
                    return true;
                }
            } else if (pattern.startsWith("*.")) {
                int slash = path.lastIndexOf('/');
                if (path.substring(slash + 1).endsWith(pattern.substring(1))) {
                    return true;
                }
            } else if (path.equals(pattern) || (pattern.isEmpty() && path.equals("/"))) {
                return true;
            }
        }
        return false;
    }

    /** Returns the filter's order among the application's web filters; lower runs first. */
    @Override
    public int getOrder() {
        return order;
    }
}
