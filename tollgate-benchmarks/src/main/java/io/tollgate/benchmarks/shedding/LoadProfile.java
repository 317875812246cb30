package io.tollgate.benchmarks.shedding;

/**
 * The offered load over time: from {@code startFactor} times the service's capacity, rising evenly to {@code
 * endFactor} times it over {@code rampNanos}, then held there until {@code durationNanos}.
 */
record LoadProfile(double capacityPerSecond, double startFactor, double endFactor, long rampNanos, long durationNanos) {

    /** Requests per second offered at {@code nanos}. */
    double rateAt(long nanos) {
        return capacityPerSecond * factorAt(nanos);
    }

    /** The offered load at {@code nanos}, as a multiple of the capacity. */
    double factorAt(long nanos) {
        double progress = Math.min(1, (double) nanos / rampNanos);
        return startFactor + (endFactor - startFactor) * progress;
    }
}
