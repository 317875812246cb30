/**
 * The servlet request as {@code tollgate-http} reads it, shared by the filter and the Spring Boot starter.
 *
 * <p><b>No compatibility promise.</b> Types here are public only so that Tollgate's other modules can reach
 * them; they may change or disappear in any release. Applications use {@link io.tollgate.servlet.TollgateFilter}.
 */
package io.tollgate.servlet.internal;
