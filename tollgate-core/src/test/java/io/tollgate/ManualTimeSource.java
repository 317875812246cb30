package io.tollgate;

import java.time.Duration;
import java.util.Objects;

/**
 * A time source that moves only when told to, for tests. Threads that {@linkplain #sleepMicros sleep} on
 * it wait until another thread advances the time past their deadline.
 *
 * <p>Thread-safe.
 */
public final class ManualTimeSource implements TimeSource {

    private long nowMicros;
    private int sleeping;

    /** Creates a source that starts at zero microseconds. */
    public ManualTimeSource() {
        this(0);
    }

    /**
     * Creates a source that starts at {@code startMicros}.
     *
     * @throws IllegalArgumentException if startMicros is negative
     */
    public ManualTimeSource(long startMicros) {
        if (startMicros < 0) {
            throw new IllegalArgumentException("start time must not be negative, was " + startMicros);
        }
        this.nowMicros = startMicros;
    }

    @Override
    public synchronized long nowMicros() {
        return nowMicros;
    }

    /**
     * Moves the time forward by {@code amount} and wakes sleepers whose deadline has come.
     *
     * @throws IllegalArgumentException if amount is negative or not a whole number of microseconds
     * @throws ArithmeticException if the time would overflow
     */
    public void advance(Duration amount) {
        Objects.requireNonNull(amount, "amount");
        if (amount.getNano() % 1_000 != 0) {
            throw new IllegalArgumentException("advance by whole microseconds, was " + amount);
        }
        advanceMicros(Math.addExact(Math.multiplyExact(amount.getSeconds(), 1_000_000L), amount.getNano() / 1_000));
    }

    /**
     * Moves the time forward by {@code micros} and wakes sleepers whose deadline has come.
     *
     * @throws IllegalArgumentException if micros is negative
     * @throws ArithmeticException if the time would overflow
     */
    public synchronized void advanceMicros(long micros) {
        if (micros < 0) {
            throw new IllegalArgumentException("time only moves forward; cannot advance by " + micros + " µs");
        }
        nowMicros = Math.addExact(nowMicros, micros);
        notifyAll();
    }

    /** Waits until the time has been advanced by at least {@code micros}. */
    @Override
    public synchronized void sleepMicros(long micros) throws InterruptedException {
        if (micros <= 0) {
            return;
        }
        long deadline = nowMicros + micros < nowMicros ? Long.MAX_VALUE : nowMicros + micros;
        sleeping++;
        notifyAll();
        try {
            while (nowMicros < deadline) {
                wait();
            }
        } finally {
            sleeping--;
        }
    }

    /**
     * Waits, in real time, until at least {@code count} threads are sleeping on this source, so that a test
     * advances the time only once the threads it drives are waiting.
     *
     * @return true once that many threads sleep, false if the timeout passed first
     * @throws InterruptedException if interrupted while waiting
     */
    public synchronized boolean awaitSleepers(int count, Duration timeout) throws InterruptedException {
        TimeSource realTime = TimeSource.system();
        long deadline = realTime.nowMicros() + timeout.toNanos() / 1_000;
        while (sleeping < count) {
            long leftMillis = (deadline - realTime.nowMicros()) / 1_000;
            if (leftMillis <= 0) {
                return false;
            }
            wait(leftMillis);
        }
        return true;
    }

    @Override
    public synchronized String toString() {
        return "ManualTimeSource[" + nowMicros + " µs]";
    }
}
