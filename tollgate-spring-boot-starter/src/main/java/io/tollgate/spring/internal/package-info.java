/**
 * What the starter shares with Tollgate's other Spring modules, such as the Spring Cloud Gateway rate
 * limiter. Internal: no compatibility promise; applications should not use it.
 */
package io.tollgate.spring.internal;
