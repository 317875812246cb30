/**
 * What the starter shares with Tollgate's other Spring modules, such as the Spring Cloud Gateway rate
 * limiter: {@link io.tollgate.spring.internal.RulesInForce}. No compatibility promise: any release may
 * change or remove it; applications should not use it.
 */
package io.tollgate.spring.internal;
