/**
 * The comparison the project's article makes in words, drawn: traffic patterns replayed through a fixed
 * window, a sliding window counter and Tollgate's token bucket, the admitted requests counted and drawn
 * (docs/algorithms.md). Run {@link io.tollgate.benchmarks.algorithms.AlgorithmComparison}.
 */
package io.tollgate.benchmarks.algorithms;
