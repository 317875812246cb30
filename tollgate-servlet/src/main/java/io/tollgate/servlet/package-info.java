/**
 * {@link io.tollgate.servlet.TollgateFilter}: the Jakarta Servlet 6 filter over {@code tollgate-http}'s
 * {@link io.tollgate.http.RequestLimiter}, registered in code or in {@code web.xml}. Thread-safe, as a filter
 * must be.
 */
package io.tollgate.servlet;
