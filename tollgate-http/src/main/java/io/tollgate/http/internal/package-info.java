/**
 * What {@code tollgate-http}'s surfaces share below its API: the configuration reader (YAML and properties
 * into core's {@code ConfigNode}, the keys of the shared sections in {@link io.tollgate.http.internal.ConfigSchema}
 * and their reading in {@link io.tollgate.http.internal.ConfigSections}) and the rate-limit header
 * fields ({@link io.tollgate.http.internal.RateLimitFields}).
 *
 * <p><b>No compatibility promise.</b> Types here are public only so that Tollgate's server and starter can
 * reach them; they may change or disappear in any release. Applications use {@code io.tollgate.http}.
 */
package io.tollgate.http.internal;
