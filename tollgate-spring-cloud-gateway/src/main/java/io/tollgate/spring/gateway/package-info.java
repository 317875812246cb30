/**
 * Tollgate for Spring Cloud Gateway: {@link io.tollgate.spring.gateway.TollgateGatewayRateLimiter}, a
 * {@code RateLimiter} for the gateway's {@code RequestRateLimiter} filter, registered as {@code
 * tollgateRateLimiter} by {@link io.tollgate.spring.gateway.TollgateGatewayAutoConfiguration}.
 */
package io.tollgate.spring.gateway;
