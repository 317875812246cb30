package io.tollgate;

/**
 * Where a limiter takes the current time from, and how it waits. All of Tollgate reads time through this
 * interface, so tests can drive a limiter with a manual clock (such as {@code ManualTimeSource} in tollgate-core's test jar) instead of sleeping.
 *
 * <p>Implementations must be thread-safe, and {@link #nowMicros()} must never go backwards.
 */
public interface TimeSource {

    /**
     * Returns the current time in microseconds. Values from one source are comparable with each other;
     * {@link #system()} counts from the Unix epoch so that several processes agree roughly.
     */
    long nowMicros();

    /**
     * Blocks until {@link #nowMicros()} has advanced by at least {@code micros}; returns at once for zero or
     * less.
     *
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    void sleepMicros(long micros) throws InterruptedException;

    /**
     * Returns the system time source: monotonic, in microseconds since the Unix epoch as read once when
     * the class loads, then advanced by the JVM's monotonic clock so that wall-clock adjustments never move
     * it backwards.
     */
    static TimeSource system() {
        return SystemTimeSource.INSTANCE;
    }
}
