/**
 * Envoy's rate limit service protocol ({@code envoy.service.ratelimit.v3}): the configuration format of
 * envoyproxy/ratelimit, read into Tollgate policies, and the matching of a request's descriptors to them.
 * Not an API of its own: the server uses it.
 */
package io.tollgate.server.envoy;
