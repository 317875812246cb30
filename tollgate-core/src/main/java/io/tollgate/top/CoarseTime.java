package io.tollgate.top;

import io.tollgate.TimeSource;

/**
 * The system clock as one daemon thread reads it every {@link #TICK_MILLIS} milliseconds, so that counting a
 * decision costs a volatile read rather than a read of the clock (about half of what counting cost): what the
 * summaries need, whose epochs are 10 seconds long, so that a decision is placed at most a tick late. The
 * thread starts with the first use and runs as long as the JVM. Thread-safe.
 */
final class CoarseTime {

    /** How often the clock is read. */
    static final long TICK_MILLIS = 10;

    private static volatile long micros = TimeSource.system().nowMicros();

    static {
        Thread ticker = new Thread(
                () -> {
                    while (true) {
                        micros = TimeSource.system().nowMicros();
                        try {
                            Thread.sleep(TICK_MILLIS);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                },
                "tollgate-coarse-time");
        ticker.setDaemon(true);
        ticker.start();
    }

    private CoarseTime() {}

    /** Returns the system clock's microseconds as last read, at most a tick ago. */
    static long nowMicros() {
        return micros;
    }
}
