/**
 * Who may ask the server for decisions: the callers its file names (by bearer token or client certificate),
 * what each may ask, and what they did, counted and logged. Shared by the decision API and Envoy's rate limit
 * service. Users configure it through the server's {@code callers} section (docs/server.md).
 *
 * <p><b>No compatibility promise.</b> Types here are public only so that the server's own packages can reach
 * them; they may change or disappear in any release, including a patch release.
 */
package io.tollgate.server.internal.access;
