/**
 * What protecting the service does, replayed: a simulated service with a fixed number of workers, offered a load
 * that ramps from half its capacity to three times it, with Tollgate's overload guard in front of it and without,
 * goodput, latency and success per priority counted and drawn (docs/load-shedding.md). Run {@link
 * io.tollgate.benchmarks.shedding.LoadSheddingComparison}.
 */
package io.tollgate.benchmarks.shedding;
