package io.tollgate.benchmarks.algorithms;

/**
 * The sliding window counter: the fixed windows' counts, weighted: a request is admitted if the current
 * window's count plus the previous window's, times the share of the previous window still inside the last
 * {@code window}, is below {@code limit}. An estimate that assumes the previous window's requests were
 * spread evenly over it.
 */
final class SlidingWindowCounter implements Admission {

    private final long limit;
    private final long windowMicros;
    private long window = -1;
    private long current;
    private long previous;

    SlidingWindowCounter(long limit, long windowMicros) {
        this.limit = limit;
        this.windowMicros = windowMicros;
    }

    @Override
    public String name() {
        return "sliding window counter";
    }

    @Override
    public boolean admit(long micros) {
        long index = micros / windowMicros;
        if (index != window) {
            previous = index == window + 1 ? current : 0;
            current = 0;
            window = index;
        }
        double elapsed = (double) (micros - index * windowMicros) / windowMicros;
        if (previous * (1 - elapsed) + current < limit) {
            current++;
            return true;
        }
        return false;
    }
}
