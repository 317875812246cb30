package io.tollgate;

/** A manual time source on which sleeping simply moves the time forward, for one-thread scenarios. */
public final class SteppingTimeSource implements TimeSource {

    private long nowMicros;
    private long sleptMicros;

    public SteppingTimeSource(long startMicros) {
        this.nowMicros = startMicros;
    }

    @Override
    public synchronized long nowMicros() {
        return nowMicros;
    }

    @Override
    public synchronized void sleepMicros(long micros) {
        if (micros > 0) {
            nowMicros += micros;
            sleptMicros += micros;
        }
    }

    public synchronized void advanceMicros(long micros) {
        nowMicros += micros;
    }

    /** Returns the total time spent sleeping so far. */
    public synchronized long sleptMicros() {
        return sleptMicros;
    }
}
