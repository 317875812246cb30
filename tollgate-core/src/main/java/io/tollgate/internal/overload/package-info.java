/**
 * Protecting the service itself from overload, whatever each client's limit: a limit on requests in flight to
 * it that is learnt from its own latency and failures ({@link io.tollgate.internal.overload.VegasLimit}), and
 * admission by priority under that limit, so that as it fills the lowest priority is refused first ({@link
 * io.tollgate.internal.overload.OverloadGuard}). Per instance: no store is asked, since the limit protects the
 * service from this instance's share of the load, and must answer within the time a request in flight takes to
 * finish.
 *
 * <p><b>No compatibility promise.</b> Exported only to Tollgate's own modules; it may change in any release.
 */
package io.tollgate.internal.overload;
