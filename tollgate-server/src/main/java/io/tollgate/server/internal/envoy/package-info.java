/**
 * Envoy's rate limit service protocol ({@code envoy.service.ratelimit.v3}): envoyproxy/ratelimit's
 * configuration format read into Tollgate policies ({@link io.tollgate.server.internal.envoy.EnvoyRateLimits}),
 * the matching of a request's descriptors to them, and the gRPC service that decides {@code ShouldRateLimit}
 * calls on the server's limiter ({@link io.tollgate.server.internal.envoy.EnvoyService}). The protocol's Java
 * types, in {@code io.tollgate.server.internal.envoy.proto}, are generated from the {@code .proto} files in
 * {@code src/main/protobuf}, which keep Envoy's proto packages (so the wire format is Envoy's) and put the Java
 * in Tollgate's own package (so it never splits a package with Envoy's API jar). Users configure it through
 * the server's {@code envoy} section (docs/envoy.md).
 *
 * <p><b>No compatibility promise.</b> Types here are public only so that the server's own package can reach
 * them; they may change or disappear in any release, including a patch release.
 */
package io.tollgate.server.internal.envoy;
