package io.tollgate.benchmarks.algorithms;

/**
 * The simple counter: at most {@code limit} requests in each window {@code [k * window, (k + 1) * window)},
 * the count starting from zero at every window's edge.
 */
final class FixedWindow implements Admission {

    private final long limit;
    private final long windowMicros;
    private long window = -1;
    private long count;

    FixedWindow(long limit, long windowMicros) {
        this.limit = limit;
        this.windowMicros = windowMicros;
    }

    @Override
    public String name() {
        return "fixed window";
    }

    @Override
    public boolean admit(long micros) {
        long current = micros / windowMicros;
        if (current != window) {
            window = current;
            count = 0;
        }
        if (count < limit) {
            count++;
            return true;
        }
        return false;
    }
}
