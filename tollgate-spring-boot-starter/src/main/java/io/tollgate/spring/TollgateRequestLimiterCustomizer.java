package io.tollgate.spring;

import io.tollgate.http.RequestLimiter;

/**
 * Adjusts the {@link RequestLimiter} that the filter and {@link RateLimit @RateLimit} share, before it is
 * built: declare one as a bean to add rules in code or replace the refusal body. Customizers run in their
 * order, after the {@code tollgate.*} properties are applied.
 */
@FunctionalInterface
public interface TollgateRequestLimiterCustomizer {

    /** Adjusts the builder. */
    void customize(RequestLimiter.Builder builder);
}
