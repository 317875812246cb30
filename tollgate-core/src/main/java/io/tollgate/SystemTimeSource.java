package io.tollgate;

import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.locks.LockSupport;

/** The JVM's monotonic clock, anchored once to the wall clock. */
final class SystemTimeSource implements TimeSource {

    static final SystemTimeSource INSTANCE = new SystemTimeSource();

    private final long originNanos = System.nanoTime();
    private final long originEpochMicros;

    private SystemTimeSource() {
        Instant now = Clock.systemUTC().instant();
        originEpochMicros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    @Override
    public long nowMicros() {
        return originEpochMicros + (System.nanoTime() - originNanos) / 1_000;
    }

    @Override
    public void sleepMicros(long micros) throws InterruptedException {
        if (micros <= 0) {
            return;
        }
        // parkNanos may return early (spuriously or on unpark), so wait against a deadline.
        long deadline = System.nanoTime() + Math.min(micros, Long.MAX_VALUE / 2_000) * 1_000;
        for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            LockSupport.parkNanos(this, left);
        }
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }

    @Override
    public String toString() {
        return "TimeSource.system()";
    }
}
