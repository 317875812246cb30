/**
 * Tollgate's own plumbing, shared between its modules: the exact token bucket arithmetic ({@link
 * io.tollgate.internal.TokenBucket}) and the argument checks every backend applies ({@link
 * io.tollgate.internal.Arguments}).
 *
 * <p><b>No compatibility promise.</b> Types here are public only so that Tollgate's other modules can reach
 * them; they may change or disappear in any release, including a patch release. Applications use
 * {@code io.tollgate} and the modules' own API packages.
 */
package io.tollgate.internal;
