package io.tollgate.servlet;

import io.tollgate.RateLimiter;
import io.tollgate.http.NormalPath;
import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.RequestLimiterConfig;
import io.tollgate.http.RuleOutcome;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A servlet filter that enforces rate limits: each request is decided by a {@link RequestLimiter}; an allowed
 * request continues down the chain with the {@code RateLimit-Policy} and {@code RateLimit} header fields on its
 * response, a refused one is answered at once with 429 (or the configured status), {@code Retry-After} and an
 * {@code application/problem+json} body.
 *
 * <p><b>Registering it.</b> In code, give it a request limiter: {@code servletContext.addFilter("tollgate", new
 * TollgateFilter(requests))}. From {@code web.xml}, use the class name and init parameters:
 *
 * <ul>
 *   <li>{@code config}: the rules, a YAML or properties file (see {@link RequestLimiterConfig}), as a file
 *       path or {@code classpath:NAME}. Required unless constructed with a request limiter.
 *   <li>{@code limiter}: {@code memory} (default) for an in-memory limiter of this filter's own, or {@code
 *       attribute:NAME} for a {@link RateLimiter}, such as a Redis one, that the application put in the
 *       servlet context attribute NAME before the filter starts.
 *   <li>{@code async}: {@code true} (default) or {@code false}, see below.
 * </ul>
 *
 * <p><b>Asynchronous decisions.</b> When a decision is not ready at once (a Redis round trip), and the request
 * supports asynchronous processing, the filter puts the request into asynchronous mode instead of blocking a
 * container thread, and dispatches it again (dispatcher type {@code ASYNC}) once allowed; map the filter for
 * {@code REQUEST} and {@code ASYNC} and mark it async-supported. Filters before this one finish their own work
 * before that dispatch, so place it before any filter that keeps per-thread state around the chain, or set
 * {@code async} to {@code false} to block instead. Requests that do not support asynchronous processing are
 * decided by blocking, for at most the limiter's time budget.
 *
 * <p><b>Paths.</b> Rules match the request's path within the application in its normal form ({@link NormalPath}),
 * read from the request URI by the request limiter's {@link RequestLimiter#paths() settings}: {@code //api/x}, {@code
 * /api/./x} and {@code /API/x;v=1} count under {@code /api/**}, however the container maps them. A path that the
 * settings refuse (a backslash, an encoded slash) is answered 400 with a problem body, before the chain.
 *
 * <p>A request is decided once: passing through the filter again, in a forward, an error dispatch or the
 * asynchronous dispatch, charges nothing. If the limiter itself fails (a bug, not a Redis outage, which its
 * failure policy answers), the request gets a 500 problem response and the failure is logged.
 *
 * <p><b>After the response.</b> A rule with a {@link io.tollgate.http.ResponseCost} is settled with the
 * response's status and header fields once the response is final, and the slots of concurrency limits that
 * the request holds are given back: when the chain returns, or, for a request the application made
 * asynchronous, when it completes.
 *
 * <p>Thread-safe.
 */
public final class TollgateFilter implements Filter {

    private static final System.Logger LOG = System.getLogger(TollgateFilter.class.getName());

    private volatile RequestLimiter requests;
    private volatile boolean async = true;
    private volatile String decidedAttribute = TollgateFilter.class.getName();
    private volatile String resumedAttribute = TollgateFilter.class.getName() + ".resumed";

    /** Creates a filter that reads its rules from the {@code config} init parameter, for {@code web.xml}. */
    public TollgateFilter() {}

    /** Creates a filter that enforces {@code requests}. */
    public TollgateFilter(RequestLimiter requests) {
        this.requests = Objects.requireNonNull(requests, "requests");
    }

    /**
     * Enforces {@code requests} from now on, such as rules read again from a changed file: each request is
     * decided by the old request limiter or the new one, never by a mix. Build the new one on the same {@link
     * RateLimiter}: the buckets live there, by policy name and key, so clients keep what they spent (a policy
     * whose limits changed converts each bucket as {@link RateLimiter} says).
     *
     * @throws NullPointerException if requests is null
     */
    public void replace(RequestLimiter requests) {
        this.requests = Objects.requireNonNull(requests, "requests");
    }

    /**
     * Reads the init parameters.
     *
     * @throws ServletException if an init parameter is missing or invalid, or the config file cannot be read,
     *     naming the parameter
     */
    @Override
    public void init(FilterConfig filterConfig) throws ServletException {
        decidedAttribute = TollgateFilter.class.getName() + "." + filterConfig.getFilterName();
        resumedAttribute = decidedAttribute + ".resumed";
        String asyncParameter = filterConfig.getInitParameter("async");
        if (asyncParameter != null) {
            if (!asyncParameter.strip().equals("true")
                    && !asyncParameter.strip().equals("false")) {
                throw new ServletException(
                        "init parameter 'async' must be true or false, was '" + asyncParameter + "'");
            }
            async = Boolean.parseBoolean(asyncParameter.strip());
        }
        String config = filterConfig.getInitParameter("config");
        String limiter = filterConfig.getInitParameter("limiter");
        if (requests != null) {
            if (config != null || limiter != null) {
                throw new ServletException(
                        "init parameters 'config' and 'limiter' do not apply to a filter given its RequestLimiter");
            }
            return;
        }
        if (config == null || config.isBlank()) {
            throw new ServletException(
                    "init parameter 'config' is required: a YAML or properties file of rules, as a path or classpath:NAME");
        }
        RequestLimiterConfig rules = FilterInitParameters.config(config.strip());
        requests = rules.newRequestLimiter(
                FilterInitParameters.limiter(filterConfig, limiter == null ? "memory" : limiter.strip()));
    }

    @Override
    public void doFilter(ServletRequest servletRequest, ServletResponse servletResponse, FilterChain chain)
            throws IOException, ServletException {
        if (!(servletRequest instanceof HttpServletRequest request)
                || !(servletResponse instanceof HttpServletResponse response)
                || servletRequest.getAttribute(decidedAttribute) != null) {
            if (servletRequest.getAttribute(resumedAttribute) instanceof RequestDecision resumed
                    && servletRequest instanceof HttpServletRequest request
                    && servletResponse instanceof HttpServletResponse response) {
                request.removeAttribute(resumedAttribute);
                serve(requests, resumed, request, response, chain);
                return;
            }
            chain.doFilter(servletRequest, servletResponse);
            return;
        }
        RequestLimiter limiter = requests;
        if (limiter == null) {
            throw new IllegalStateException("TollgateFilter used before init");
        }
        NormalPath path;
        try {
            path = ServletRequestView.normalPath(request, limiter.paths());
        } catch (IllegalArgumentException refused) {
            write(response, RequestDecision.problem(400, "Bad Request: " + refused.getMessage()));
            return;
        }
        CompletableFuture<RequestDecision> pending;
        try {
            pending = limiter.decide(new ServletRequestView(request, path)).toCompletableFuture();
        } catch (RuntimeException e) {
            failed(response, e);
            return;
        }
        if (pending.isDone() || !async || !request.isAsyncSupported() || request.isAsyncStarted()) {
            RequestDecision decision;
            try {
                decision = pending.join();
            } catch (CompletionException e) {
                failed(response, e.getCause());
                return;
            }
            if (apply(limiter, request, response, decision)) {
                serve(limiter, decision, request, response, chain);
            }
            return;
        }
        decideAsynchronously(limiter, request, response, pending);
    }

    private void decideAsynchronously(
            RequestLimiter limiter,
            HttpServletRequest request,
            HttpServletResponse response,
            CompletableFuture<RequestDecision> pending) {
        AsyncContext context = request.startAsync(request, response);
        // The decision, the container's timeout and a broken connection race to end the request; the first wins.
        AtomicBoolean settled = new AtomicBoolean();
        context.addListener(new AsyncListener() {
            @Override
            public void onTimeout(AsyncEvent event) throws IOException {
                if (settled.compareAndSet(false, true)) {
                    write(response, RequestDecision.problem(503, "The rate limit decision took too long."));
                    context.complete();
                }
            }

            @Override
            public void onError(AsyncEvent event) {
                if (settled.compareAndSet(false, true)) {
                    context.complete();
                }
            }

            @Override
            public void onComplete(AsyncEvent event) {}

            @Override
            public void onStartAsync(AsyncEvent event) {}
        });
        pending.whenComplete((decision, failure) -> {
            if (!settled.compareAndSet(false, true)) {
                if (decision != null) {
                    limiter.release(decision); // answered already: the request holds no slot
                }
                return;
            }
            if (failure == null && decision.allowed()) {
                try {
                    record(request, response, decision);
                    if (decision.settlesAfterResponse()) {
                        request.setAttribute(resumedAttribute, decision);
                    }
                    context.dispatch();
                } catch (RuntimeException e) {
                    limiter.release(decision);
                    LOG.log(Level.DEBUG, "could not resume an allowed request", e);
                }
                return;
            }
            // Writing a body may block on a slow client: do it on a container thread, not the limiter's.
            context.start(() -> {
                try {
                    if (failure == null) {
                        record(request, response, decision);
                        write(response, decision);
                        limiter.finish(decision, decision.status(), decision.headers()::get);
                    } else {
                        failed(response, failure instanceof CompletionException ? failure.getCause() : failure);
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.log(Level.DEBUG, "could not answer a rate-limited request", e);
                } finally {
                    context.complete();
                }
            });
        });
    }

    /** Records the decision and sets its headers; for a refusal, writes it. Returns whether the request goes on. */
    private boolean apply(
            RequestLimiter limiter, HttpServletRequest request, HttpServletResponse response, RequestDecision decision)
            throws IOException {
        record(request, response, decision);
        if (decision.allowed()) {
            return true;
        }
        write(response, decision);
        limiter.finish(decision, decision.status(), decision.headers()::get);
        return false;
    }

    /**
     * Passes an allowed request down the chain and, if a rule settles its cost after the response, settles it
     * with the response's status and header fields once the response is final, and gives back the slots the
     * request holds: when the chain returns, or when an asynchronous request the application started
     * completes. A chain that throws is settled as the 500 the container answers.
     */
    private static void serve(
            RequestLimiter limiter,
            RequestDecision decision,
            HttpServletRequest request,
            HttpServletResponse response,
            FilterChain chain)
            throws IOException, ServletException {
        if (!decision.settlesAfterResponse()) {
            chain.doFilter(request, response);
            return;
        }
        boolean served = false;
        try {
            chain.doFilter(request, response);
            served = true;
        } finally {
            if (served && request.isAsyncStarted()) {
                request.getAsyncContext().addListener(new SettleOnCompletion(limiter, decision, response));
            } else {
                limiter.finish(decision, served ? response.getStatus() : 500, response::getHeader);
            }
        }
    }

    /**
     * Settles a request that the application made asynchronous once it completes (after an error too), and
     * follows it into any asynchronous cycle it starts again.
     */
    private static final class SettleOnCompletion implements AsyncListener {

        private final RequestLimiter limiter;
        private final RequestDecision decision;
        private final HttpServletResponse response;
        private final AtomicBoolean settled = new AtomicBoolean();

        SettleOnCompletion(RequestLimiter limiter, RequestDecision decision, HttpServletResponse response) {
            this.limiter = limiter;
            this.decision = decision;
            this.response = response;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            if (settled.compareAndSet(false, true)) {
                limiter.finish(decision, response.getStatus(), response::getHeader);
            }
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            event.getAsyncContext().addListener(this);
        }

        @Override
        public void onTimeout(AsyncEvent event) {}

        @Override
        public void onError(AsyncEvent event) {}
    }

    /** Marks the request decided, so it is not charged again, and sets the rate-limit header fields. */
    private void record(HttpServletRequest request, HttpServletResponse response, RequestDecision decision) {
        request.setAttribute(decidedAttribute, decision);
        for (Map.Entry<String, String> header : decision.headers().entrySet()) {
            response.setHeader(header.getKey(), header.getValue());
        }
        logDryRuns(request, decision);
    }

    private static void write(HttpServletResponse response, RequestDecision refusal) throws IOException {
        for (Map.Entry<String, String> header : refusal.headers().entrySet()) {
            response.setHeader(header.getKey(), header.getValue());
        }
        byte[] body = refusal.body();
        response.setStatus(refusal.status());
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    private static void logDryRuns(HttpServletRequest request, RequestDecision decision) {
        if (!LOG.isLoggable(Level.DEBUG)) {
            return;
        }
        for (RuleOutcome outcome : decision.outcomes()) {
            if (outcome.rule().dryRun() && !outcome.decision().allowed()) {
                LOG.log(
                        Level.DEBUG,
                        "dry run: policy {0} would refuse {1} {2}",
                        outcome.policy().name(),
                        request.getMethod(),
                        request.getRequestURI());
            }
        }
    }

    private static void failed(HttpServletResponse response, Throwable failure) throws IOException {
        LOG.log(Level.WARNING, "rate limiter failed; answering 500", failure);
        if (!response.isCommitted()) {
            response.reset();
            write(response, RequestDecision.limiterFailed());
        }
    }
}
