package io.tollgate.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits calls of a Spring MVC or WebFlux controller method by a policy of {@code tollgate.policies}: each call takes
 * {@link #cost()} tokens from the bucket of the client that {@link #key()} names, and a refused call is
 * answered as the filter answers a refused request: 429 (or the configured status) with {@code
 * Retry-After}, the rate-limit header fields and a problem body. An allowed call's response carries the
 * rate-limit header fields.
 *
 * <pre>{@code
 * @RateLimit(policy = "per-user", key = "#user.id")
 * @GetMapping("/users/{id}/orders")
 * List<Order> orders(@PathVariable("id") User user) { ... }
 * }</pre>
 *
 * <p>Repeatable: several annotations are checked in order, and a refusal ends the check, as rules do. The
 * policy names and keys are checked when the application starts.
 *
 * <p>In a WebFlux application the method must return a reactive type ({@code Mono}, {@code Flux}): the
 * limit is checked, without blocking, when its result is subscribed to, and a refusal is the result's
 * error. An annotated method that returns anything else fails the start there.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@Repeatable(RateLimits.class)
public @interface RateLimit {

    /** The name of the policy charged, one of {@code tollgate.policies}. */
    String policy();

    /**
     * A SpEL expression for the client key, over the method's arguments by name ({@code #user.id}) and the
     * current request ({@code #request}: an {@code HttpServletRequest} in Spring MVC, a {@code
     * ServerHttpRequest} in WebFlux, where {@code #exchange} is the {@code ServerWebExchange}); empty, the
     * default, is the client
     * IP, found as {@code tollgate.client-ip} says. A key that evaluates to null or an empty string (a header
     * the client did not send) is a missing key, handled as {@link #onMissingKey()} says; use SpEL's safe
     * navigation ({@code #request.getHeader('X-User')?.trim()}) so that a missing value is null rather than
     * an error.
     */
    String key() default "";

    /**
     * What to do when the key is missing, as for rules: {@code skip} (the default: this limit does not apply
     * to the call), {@code fallback:KEY} (use another key, such as {@code fallback:ip}) or {@code
     * reject:STATUS} (answer with that 4xx status and a problem body, such as {@code reject:401}). Checked
     * when the application starts.
     */
    String onMissingKey() default "skip";

    /** The tokens a call costs, 1 to the policy's smallest capacity. */
    long cost() default 1;
}
