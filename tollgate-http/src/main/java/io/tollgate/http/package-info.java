/**
 * HTTP enforcement independent of any server API: {@link io.tollgate.http.RequestLimiter} applies
 * {@link io.tollgate.http.Rule}s (path, method, host, client key) to a request seen through
 * {@link io.tollgate.http.HttpRequestView} and answers with a {@link io.tollgate.http.RequestDecision}: pass,
 * or refuse with 429 (or 503 when the limiter fails closed), {@code Retry-After}, the IETF
 * {@code RateLimit-Policy} and {@code RateLimit} fields and an RFC 9457 problem body. Client keys and client
 * IPs behind trusted proxies ({@link io.tollgate.http.ClientIpResolver}), rules files in YAML or properties
 * ({@link io.tollgate.http.RequestLimiterConfig}; their schema, {@link io.tollgate.http.ConfigSchema}, and their
 * sections within a larger file, {@link io.tollgate.http.RuleSections}, read from YAML by {@link
 * io.tollgate.http.YamlConfig}), what operators read about a limiter ({@link io.tollgate.http.AdminViews}) and
 * Micrometer metrics live here too.
 *
 * <p>The servlet filter, the Spring Boot starter and the server are thin adapters over this package, so
 * they answer alike. Everything here is immutable or thread-safe.
 */
package io.tollgate.http;
