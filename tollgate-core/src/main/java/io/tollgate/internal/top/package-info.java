/**
 * Who is limited: the keys refused most and charged most per policy over recent windows, in memory fixed by the
 * summaries' capacity ({@link io.tollgate.internal.top.HeavyHitters}), with the error bound of each count.
 *
 * <p><b>No compatibility promise.</b> Exported only to Tollgate's own modules; it may change in any release.
 */
package io.tollgate.internal.top;
