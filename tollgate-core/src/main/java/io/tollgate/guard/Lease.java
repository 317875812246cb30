package io.tollgate.guard;

import io.tollgate.Policy;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * One key's lease on this instance ({@link Leases}): the tokens it holds, until when, and the rate at which this
 * instance asks for the key. Thread-safe: the tokens are one atomic counter, the rate a lock-free window.
 */
final class Lease {

    /** The window over which a key's rate on this instance is counted. */
    static final long WINDOW_MICROS = 100_000;

    /** How long a lease that holds nothing is kept after the key was last asked for. */
    private static final long IDLE_MICROS = 1_000_000;

    final String policyName;
    final String key;
    /** Tokens held, ready for requests. */
    final AtomicLong tokens = new AtomicLong();
    /** Whether a slice is on its way. */
    final AtomicBoolean fetching = new AtomicBoolean();
    /** The policy the lease's tokens were taken under: given back under it. */
    volatile Policy policy;
    /** When the tokens held are given back unless a slice renews them, in µs of the guard's clock. */
    volatile long expiresAtMicros;
    /** No slice is asked for before this: after one was refused, or failed. */
    volatile long notBeforeMicros;
    /** Bumped whenever the key changes elsewhere: a slice sent before is not kept. */
    volatile int generation;

    /** When the bucket is full again as the last slice reported it, in µs of the guard's clock. */
    volatile long fullAtMicros;

    /** The window being counted, and the tokens asked for in it. */
    final AtomicLong windowStartMicros = new AtomicLong();

    private final LongAdder windowTokens = new LongAdder();
    /** The tokens a second asked for here, as of the last whole window. */
    volatile long perSecond;

    Lease(String policyName, String key) {
        this.policyName = policyName;
        this.key = key;
    }

    /** Returns whether nobody asked for the key lately, and the lease holds nothing: it may be dropped. */
    boolean idle(long nowMicros) {
        return tokens.get() == 0 && !fetching.get() && nowMicros - windowStartMicros.get() >= IDLE_MICROS;
    }

    /** Counts {@code cost} tokens asked for at {@code nowMicros}; the first count of a window ends the last. */
    void count(long cost, long nowMicros) {
        long start = windowStartMicros.get();
        long elapsed = nowMicros - start;
        if (elapsed >= WINDOW_MICROS && windowStartMicros.compareAndSet(start, nowMicros)) {
            long counted = windowTokens.sumThenReset();
            // a whole window with nothing in it before this count brings the rate down to nothing
            perSecond = elapsed >= 2 * WINDOW_MICROS ? 0 : counted * 1_000_000 / elapsed;
        }
        windowTokens.add(cost);
    }

    /** Takes {@code cost} tokens if the lease holds them and lives; returns what is left, or -1. */
    long take(long cost, long nowMicros) {
        if (nowMicros >= expiresAtMicros) {
            return -1;
        }
        while (true) {
            long held = tokens.get();
            if (held < cost) {
                return -1;
            }
            if (tokens.compareAndSet(held, held - cost)) {
                return held - cost;
            }
        }
    }
}
