package io.tollgate.spring.internal;

import io.tollgate.Policy;
import io.tollgate.http.RequestLimiter;
import java.util.Map;

/**
 * The request limiter and the policies of {@code tollgate.*} in force, which a refresh of the environment
 * replaces; the starter registers one as a bean. Internal: no compatibility promise. Thread-safe.
 */
public interface RulesInForce {

    /** Returns the request limiter in force. */
    RequestLimiter requests();

    /** Returns the policies of {@code tollgate.policies} in force, by name. */
    Map<String, Policy> policies();
}
