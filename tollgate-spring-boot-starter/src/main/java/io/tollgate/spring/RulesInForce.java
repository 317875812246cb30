package io.tollgate.spring;

import io.tollgate.Policy;
import io.tollgate.http.RequestLimiter;
import java.util.Map;

/**
 * The request limiter and the policies of {@code tollgate.*} in force, which a refresh of the environment
 * replaces: the starter registers one as a bean, which the filters, {@link RateLimit @RateLimit} and Spring Cloud
 * Gateway's limiter read on every request, and which an application's own code may read as they do, to decide a
 * request or a call by the rules in force. Thread-safe.
 */
public interface RulesInForce {

    /** Returns the request limiter in force. */
    RequestLimiter requests();

    /** Returns the policies of {@code tollgate.policies} in force, by name. */
    Map<String, Policy> policies();
}
