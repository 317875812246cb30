package io.tollgate.spring;

import io.tollgate.Policy;
import io.tollgate.http.ClientIpResolver;
import io.tollgate.http.HttpRequestView;
import io.tollgate.http.MissingKey;
import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import io.tollgate.http.RuleOutcome;
import java.lang.reflect.Method;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Enforces {@link RateLimit @RateLimit}: before the method runs, each annotation's policy is charged for the
 * key it names, in order, until one refuses; a refusal throws {@link RateLimitExceededException}, which the
 * {@link RateLimitExceptionResolver} (Spring MVC) or the {@link RateLimitExceptionHandler} (WebFlux) answers
 * as the filter answers refusals.
 *
 * <p>Called on a servlet request's thread (Spring MVC, whatever the method returns), the annotations are
 * checked when the method is called, waiting for the limiter (at most its time budget). Otherwise a method
 * that returns a reactive type ({@code Mono}, {@code Flux}, or another that Spring adapts) is checked when its
 * result is subscribed to, without blocking: the request is the WebFlux exchange in the subscriber's context,
 * and the refusal is the result's error.
 * Thread-safe.
 */
final class RateLimitInterceptor implements MethodInterceptor {

    /** The header fields that several limiters may each add to one response (RFC 9651 lists). */
    static final Set<String> LIST_FIELDS = Set.of("RateLimit", "RateLimit-Policy");

    private static final boolean SERVLET_PRESENT = ClassUtils.isPresent(
            "jakarta.servlet.http.HttpServletRequest", RateLimitInterceptor.class.getClassLoader());

    /** What the annotations are checked against; {@link #replace} swaps it whole. */
    private volatile State state;

    private final SpelExpressionParser parser = new SpelExpressionParser();
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

    /** One annotation: the rule it charges, and its key expression (null for the client IP). */
    private record Check(Rule rule, Expression key, String keyText, Method method) {}

    /**
     * The request limiter, policies and client IPs of one configuration, and the annotations read against
     * them, per method.
     */
    private record State(
            RequestLimiter requests,
            Map<String, Policy> policies,
            ClientIpResolver clientIps,
            Map<Method, List<Check>> checks) {}

    RateLimitInterceptor(RequestLimiter requests, Map<String, Policy> policies, ClientIpResolver clientIps) {
        this.state = new State(requests, Map.copyOf(policies), clientIps, new ConcurrentHashMap<>());
    }

    /**
     * Checks from now on against a new configuration, once every annotation checked so far (at the start,
     * every controller's) reads well against it.
     *
     * @throws InvalidTollgatePropertiesException if an annotation names a policy the new configuration lacks,
     *     or a cost above its capacity; nothing is replaced then
     */
    synchronized void replace(RequestLimiter requests, Map<String, Policy> policies, ClientIpResolver clientIps) {
        State next = new State(requests, Map.copyOf(policies), clientIps, new ConcurrentHashMap<>());
        for (Method method : state.checks().keySet()) {
            next.checks().put(method, read(method, next.policies()));
        }
        state = next;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Method method = target == null
                ? invocation.getMethod()
                : AopUtils.getMostSpecificMethod(invocation.getMethod(), AopUtils.getTargetClass(target));
        State current = state;
        List<Check> annotations = checks(current, method);
        if (annotations.isEmpty()) {
            return invocation.proceed();
        }
        CallContext call = SERVLET_PRESENT ? ServletCallContext.current() : null;
        ReactiveAdapter reactive = call == null ? reactiveAdapter(method) : null;
        if (reactive != null) {
            // not on a servlet request's thread (where Spring MVC may return a Mono too): WebFlux's
            return checkWhenSubscribed(current, annotations, invocation, reactive);
        }
        List<RuleOutcome> outcomes = new ArrayList<>(annotations.size());
        for (Check check : annotations) {
            String key = keyOrFallback(current, check, invocation, call);
            if (key == null) {
                continue; // skipped, as a rule without its key is
            }
            RuleOutcome outcome = current.requests().check(check.rule(), key);
            outcomes.add(outcome);
            if (outcome.refuses()) {
                throw new RateLimitExceededException(outcomes);
            }
        }
        if (call != null && !outcomes.isEmpty()) {
            call.addHeaders(current.requests().respond(outcomes));
        }
        return invocation.proceed();
    }

    /**
     * Returns the method's result, of its own reactive type, that checks the annotations in order when
     * subscribed to and then subscribes to what the method returns, or fails with the refusal.
     */
    private Object checkWhenSubscribed(
            State current, List<Check> annotations, MethodInvocation invocation, ReactiveAdapter adapter) {
        if (adapter.isMultiValue()) {
            return adapter.fromPublisher(Flux.deferContextual(context -> checked(
                            current, annotations, invocation, context)
                    .thenMany(Flux.defer(() -> Flux.from(adapter.toPublisher(proceed(invocation)))))));
        }
        return adapter.fromPublisher(Mono.deferContextual(context -> checked(current, annotations, invocation, context)
                .then(Mono.defer(() -> Mono.from(adapter.toPublisher(proceed(invocation)))))));
    }

    /**
     * Checks the annotations one after the other, each once the one before has allowed the call; a decision
     * that Redis makes continues on the exchange's own event loop rather than on the Redis client's.
     */
    private Mono<Void> checked(
            State current, List<Check> annotations, MethodInvocation invocation, ContextView context) {
        ServerWebExchange exchange =
                ServerWebExchangeContextFilter.getExchange(context).orElse(null);
        if (exchange == null) {
            return checked(current, annotations, invocation, null, null);
        }
        return exchange.getPrincipal()
                .map(Principal::getName)
                .defaultIfEmpty("")
                .flatMap(principal -> checked(
                        current,
                        annotations,
                        invocation,
                        exchange,
                        new ExchangeCallContext(exchange, principal.isEmpty() ? null : principal)));
    }

    private Mono<Void> checked(
            State current,
            List<Check> annotations,
            MethodInvocation invocation,
            ServerWebExchange exchange,
            CallContext call) {
        List<RuleOutcome> outcomes = new ArrayList<>(annotations.size());
        Mono<Void> chain = Mono.empty();
        for (Check check : annotations) {
            chain = chain.then(Mono.defer(() -> {
                if (!outcomes.isEmpty() && outcomes.get(outcomes.size() - 1).refuses()) {
                    return Mono.empty();
                }
                String key = keyOrFallback(current, check, invocation, call);
                if (key == null) {
                    return Mono.empty();
                }
                CompletableFuture<RuleOutcome> pending =
                        current.requests().checkAsync(check.rule(), key).toCompletableFuture();
                Mono<RuleOutcome> outcome = Mono.fromFuture(pending);
                if (!pending.isDone()) {
                    outcome = outcome.publishOn(ExchangeThreads.of(exchange));
                }
                return outcome.doOnNext(outcomes::add).then();
            }));
        }
        return chain.then(Mono.defer(() -> {
            if (outcomes.stream().anyMatch(RuleOutcome::refuses)) {
                return Mono.error(new RateLimitExceededException(outcomes));
            }
            if (call != null && !outcomes.isEmpty()) {
                call.addHeaders(current.requests().respond(outcomes));
            }
            return Mono.empty();
        }));
    }

    private static Object proceed(MethodInvocation invocation) {
        try {
            return invocation.proceed();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new CompletionException(e);
        }
    }

    /** Returns the adapter of the method's reactive return type, or null if it returns something else. */
    static ReactiveAdapter reactiveAdapter(Method method) {
        Class<?> type = method.getReturnType();
        if (type == void.class || type == Object.class) {
            return null;
        }
        return ReactiveAdapterRegistry.getSharedInstance().getAdapter(type);
    }

    /**
     * Checks the annotations of {@code method} now, so that a bad one fails the application's start.
     *
     * @throws InvalidTollgatePropertiesException if an annotation names an unknown policy, a cost out of
     *     range or a key that is not SpEL, naming the method
     */
    void validate(Method method) {
        checks(state, method);
    }

    private List<Check> checks(State current, Method method) {
        return current.checks().computeIfAbsent(method, m -> read(m, current.policies()));
    }

    private List<Check> read(Method method, Map<String, Policy> policies) {
        List<Check> read = new ArrayList<>();
        for (RateLimit annotation : AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RateLimit.class)) {
            String where = "@RateLimit(policy = \"" + annotation.policy() + "\") on " + describe(method);
            Policy policy = policies.get(annotation.policy());
            if (policy == null) {
                throw new InvalidTollgatePropertiesException(
                        where + ": unknown policy '" + annotation.policy() + "'; defined in tollgate.policies: "
                                + (policies.isEmpty() ? "none" : String.join(", ", new TreeSet<>(policies.keySet()))),
                        null);
            }
            Rule rule;
            try {
                rule = Rule.builder(policy)
                        .cost(annotation.cost())
                        .onMissingKey(MissingKey.parse(annotation.onMissingKey()))
                        .build();
            } catch (IllegalArgumentException e) {
                throw new InvalidTollgatePropertiesException(where + ": " + e.getMessage(), e);
            }
            Expression key = null;
            if (!annotation.key().isBlank()) {
                try {
                    key = parser.parseExpression(annotation.key());
                } catch (ExpressionException e) {
                    throw new InvalidTollgatePropertiesException(
                            where + ": key '" + annotation.key() + "' is not a SpEL expression: " + e.getMessage(), e);
                }
            }
            read.add(new Check(rule, key, annotation.key(), method));
        }
        return List.copyOf(read);
    }

    /**
     * Returns the call's key; if it is missing, the fallback key, or null to skip the limit, or throws the
     * rejection for the resolver or handler to answer, as the annotation's {@code onMissingKey} says.
     */
    private String keyOrFallback(State current, Check check, MethodInvocation invocation, CallContext call) {
        String key = key(current, check, invocation, call);
        if (key != null) {
            return key;
        }
        String policy = check.rule().policy().name();
        RequestDecision rejected =
                current.requests().missingKey(check.rule(), "what its rate limit '" + policy + "' is keyed by");
        if (rejected != null) {
            throw new MissingRateLimitKeyException(rejected);
        }
        if (check.rule().onMissingKey() instanceof MissingKey.Fallback fallback && call != null) {
            return fallback.key().resolve(call.view(), current.clientIps());
        }
        return null;
    }

    /** Returns the call's key, or null if it is missing: the client has no address, or the key found nothing. */
    private String key(State current, Check check, MethodInvocation invocation, CallContext call) {
        if (check.key() == null) {
            if (call == null) {
                throw new IllegalStateException("@RateLimit on " + describe(check.method())
                        + " is keyed by the client IP, but there is no current HTTP request");
            }
            String ip = current.clientIps().clientIp(call.view());
            return ip == null ? null : "ip:" + ip;
        }
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                invocation.getThis(), check.method(), invocation.getArguments(), parameterNames);
        context.setVariable("request", call == null ? null : call.request());
        if (call instanceof ExchangeCallContext exchange) {
            context.setVariable("exchange", exchange.exchange());
        }
        Object value;
        try {
            value = check.key().getValue(context);
        } catch (ExpressionException e) {
            throw new IllegalStateException(
                    "@RateLimit on " + describe(check.method()) + ": key '" + check.keyText() + "' failed: "
                            + e.getMessage(),
                    e);
        }
        String key = value == null ? "" : value.toString();
        return key.isEmpty() ? null : "key:" + key;
    }

    /** The HTTP request a call serves: as rules see it, as SpEL's {@code #request} sees it, and its response. */
    interface CallContext {
        HttpRequestView view();

        Object request();

        /** Adds the decision's header fields to the response; several limiters' rate-limit fields add up. */
        void addHeaders(RequestDecision decision);
    }

    /** A WebFlux exchange; {@code #request} is its {@code ServerHttpRequest}, {@code #exchange} the exchange. */
    record ExchangeCallContext(ServerWebExchange exchange, String principal) implements CallContext {
        @Override
        public HttpRequestView view() {
            return new ServerRequestView(exchange.getRequest(), principal);
        }

        @Override
        public Object request() {
            return exchange.getRequest();
        }

        @Override
        public void addHeaders(RequestDecision decision) {
            ReactiveResponses.addHeaders(exchange.getResponse().getHeaders(), decision);
        }
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "()";
    }
}
