/**
 * The server's own plumbing, public only so that {@code io.tollgate.server} can reach it: Envoy's rate limit
 * service lives in {@code io.tollgate.server.internal.envoy}.
 *
 * <p><b>No compatibility promise.</b> Types here may change or disappear in any release, including a patch
 * release. The server is configured through its YAML file and embedded through {@link
 * io.tollgate.server.TollgateServer}.
 */
package io.tollgate.server.internal;
