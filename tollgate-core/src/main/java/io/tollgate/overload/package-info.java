/**
 * Protecting the service itself from overload, whatever each client's limit: a limit on requests in flight to
 * it that is learnt from its own latency and failures ({@link io.tollgate.overload.VegasLimit}), and
 * admission by priority under that limit, so that as it fills the lowest priority is refused first ({@link
 * io.tollgate.overload.OverloadGuard}). Per instance: no store is asked, since the limit protects the
 * service from this instance's share of the load, and must answer within the time a request in flight takes to
 * finish.
 *
 * <p>Applications turn it on through {@code io.tollgate.http.OverloadProtection} (the {@code overload-protection}
 * section of a rules file); these types are for a front door of one's own that admits work the same way.
 */
package io.tollgate.overload;
