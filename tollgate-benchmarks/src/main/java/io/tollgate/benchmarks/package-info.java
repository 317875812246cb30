/**
 * JMH benchmarks and load harnesses that measure Tollgate beside named peers (Bucket4j, nginx) in the same
 * run; their results and the commands that reproduce them are in docs/benchmarks.md. Never deployed.
 */
package io.tollgate.benchmarks;
