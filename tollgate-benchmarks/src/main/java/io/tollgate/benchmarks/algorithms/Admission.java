package io.tollgate.benchmarks.algorithms;

/** A limiting algorithm for one client, asked request by request, in time order. Not thread-safe. */
interface Admission {

    /** The algorithm's name, for the chart and the table. */
    String name();

    /** Returns whether a request at {@code micros} (from the replay's start) is admitted, and counts it if so. */
    boolean admit(long micros);
}
