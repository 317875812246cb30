/**
 * The Spring Boot 4 starter: {@link io.tollgate.spring.TollgateAutoConfiguration} binds {@code tollgate.*}
 * ({@link io.tollgate.spring.TollgateProperties}), registers the filter for rules (the servlet filter, or
 * {@link io.tollgate.spring.TollgateWebFilter} in a WebFlux application) and the interceptor for {@link
 * io.tollgate.spring.RateLimit @RateLimit}, keeps buckets in the application's Redis when it has one (in
 * memory otherwise), and reports to its {@code MeterRegistry}. Customizers adjust what it builds; a refusal
 * inside a controller is a {@link io.tollgate.spring.RateLimitExceededException}, answered by {@link
 * io.tollgate.spring.RateLimitExceptionResolver} (Spring MVC) or {@link
 * io.tollgate.spring.RateLimitExceptionHandler} (WebFlux) as the filter answers.
 */
package io.tollgate.spring;
