/**
 * For those who write a backend (a {@link io.tollgate.RateLimiter} over another store): the argument checks
 * every backend applies, so that all of them reject the same bad input with the same message. Applications
 * do not need this package.
 */
package io.tollgate.spi;
