package io.tollgate.spring;

import io.tollgate.Policy;
import io.tollgate.http.ClientIpResolver;
import io.tollgate.http.MissingKey;
import io.tollgate.http.RequestDecision;
import io.tollgate.http.RequestLimiter;
import io.tollgate.http.Rule;
import io.tollgate.http.RuleOutcome;
import io.tollgate.servlet.internal.ServletRequestView;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Enforces {@link RateLimit @RateLimit}: before the method runs, each annotation's policy is charged for the
 * key it names, in order, until one refuses; a refusal throws {@link RateLimitExceededException}, which the
 * {@link RateLimitExceptionResolver} answers as the filter answers refusals. Thread-safe.
 */
final class RateLimitInterceptor implements MethodInterceptor {

    /** The header fields that several limiters may each add to one response (RFC 9651 lists). */
    private static final Set<String> LIST_FIELDS = Set.of("RateLimit", "RateLimit-Policy");

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
        ServletRequestAttributes attributes =
                RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes servlet
                        ? servlet
                        : null;
        HttpServletRequest request = attributes == null ? null : attributes.getRequest();
        List<RuleOutcome> outcomes = new ArrayList<>(annotations.size());
        for (Check check : annotations) {
            String key = key(current, check, invocation, request);
            if (key == null) {
                key = missingKey(current, check, request);
                if (key == null) {
                    continue; // skipped, as a rule without its key is
                }
            }
            RuleOutcome outcome = current.requests().check(check.rule(), key);
            outcomes.add(outcome);
            if (outcome.refuses()) {
                throw new RateLimitExceededException(outcomes);
            }
        }
        HttpServletResponse response = attributes == null ? null : attributes.getResponse();
        if (response != null && !outcomes.isEmpty()) {
            addHeaders(response, current.requests().respond(outcomes));
        }
        return invocation.proceed();
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

    /** Sets the decision's header fields; several limiters' rate-limit fields add up. */
    static void addHeaders(HttpServletResponse response, RequestDecision decision) {
        decision.headers().forEach((name, value) -> {
            if (LIST_FIELDS.contains(name)) {
                response.addHeader(name, value);
            } else {
                response.setHeader(name, value);
            }
        });
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

    /** Returns the call's key, or null if it is missing: the client has no address, or the key found nothing. */
    private String key(State current, Check check, MethodInvocation invocation, HttpServletRequest request) {
        if (check.key() == null) {
            if (request == null) {
                throw new IllegalStateException("@RateLimit on " + describe(check.method())
                        + " is keyed by the client IP, but there is no current HTTP request");
            }
            String ip = current.clientIps().clientIp(new ServletRequestView(request));
            return ip == null ? null : "ip:" + ip;
        }
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                invocation.getThis(), check.method(), invocation.getArguments(), parameterNames);
        context.setVariable("request", request);
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

    /**
     * Handles a missing key as the annotation's {@code onMissingKey} says: returns the fallback key, or null to
     * skip the limit, or throws the rejection for the resolver to answer.
     */
    private String missingKey(State current, Check check, HttpServletRequest request) {
        String policy = check.rule().policy().name();
        RequestDecision rejected =
                current.requests().missingKey(check.rule(), "what its rate limit '" + policy + "' is keyed by");
        if (rejected != null) {
            throw new MissingRateLimitKeyException(rejected);
        }
        if (check.rule().onMissingKey() instanceof MissingKey.Fallback fallback && request != null) {
            return fallback.key().resolve(new ServletRequestView(request), current.clientIps());
        }
        return null;
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "()";
    }
}
