/**
 * Who is limited: the keys refused most and charged most per policy over the last minute and the last 15 minutes,
 * counted by a listener of a limiter's decisions ({@link io.tollgate.top.HeavyHitters}) in summaries of fixed
 * memory, each count with its error bound, and merged with the other instances' that share the store ({@link
 * io.tollgate.top.TopKeys}). The server's {@code /admin/top} and the starter's Actuator endpoint show them; a program
 * reads them from {@link io.tollgate.runtime.TollgateRuntime#topKeys()}.
 */
package io.tollgate.top;
