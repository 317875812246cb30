package io.tollgate.benchmarks.shedding;

import io.tollgate.Priority;

/** One client's request in the replay, and how it ended. */
final class SimulatedRequest {

    final long arrivedNanos;
    final Priority priority;
    /** The pass it holds, or null where there is no gate. */
    Gate.Pass slot;
    /** Answered to its client: served, or timed out. */
    boolean answered;

    SimulatedRequest(long arrivedNanos, Priority priority) {
        this.arrivedNanos = arrivedNanos;
        this.priority = priority;
    }
}
