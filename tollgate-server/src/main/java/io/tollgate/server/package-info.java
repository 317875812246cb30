/**
 * The standalone server on Netty's event loops: the decision API ({@code POST /v1/check}), the rate-limiting reverse
 * proxy, {@code /healthz}, {@code /readyz} and Prometheus {@code /metrics}, configured by one YAML file
 * ({@link io.tollgate.server.ServerConfig}) and run by {@link io.tollgate.server.Main} or embedded with
 * {@link io.tollgate.server.TollgateServer}. Every configuration key is in docs/server.md.
 */
package io.tollgate.server;
