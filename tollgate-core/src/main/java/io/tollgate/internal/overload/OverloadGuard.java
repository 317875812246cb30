package io.tollgate.internal.overload;

import java.util.Objects;

/**
 * Admits requests to the service under a limit on how many are in flight at once, learnt from the service's own
 * latency and failures ({@link VegasLimit}), by priority: a {@link Priority#CRITICAL} request is admitted while
 * the requests in flight are fewer than the limit, a {@link Priority#DEFAULT} one while they are fewer than the
 * limit less the critical reserve, a {@link Priority#SHEDDABLE} one while they are fewer than the limit less both
 * reserves. So as the limit fills, sheddable requests are refused first, then default ones, and the reserve stays
 * for the critical. A refused request is meant to be answered {@code 503} at once: it took nothing from anyone's
 * bucket.
 *
 * <p>Each admitted request holds a {@link Slot}, which it must leave exactly once, saying how it ended. Thread-safe.
 */
public final class OverloadGuard {

    private final VegasLimit limit;
    private final double criticalReserve;
    private final double defaultReserve;
    private int inFlight;

    /**
     * @param min the least the limit may fall to, at least 1
     * @param initial the limit before anything is learnt
     * @param max the most the limit may grow to
     * @param criticalReserve the share of the limit only critical requests may use, 0 to 1 (0.1: a tenth)
     * @param defaultReserve the share beyond it that sheddable requests may not use, 0 to 1
     * @throws IllegalArgumentException naming the value, unless {@code 1 <= min <= initial <= max} and the
     *     reserves together are at most 1
     */
    public OverloadGuard(int min, int initial, int max, double criticalReserve, double defaultReserve) {
        this.limit = new VegasLimit(min, initial, max);
        if (!(criticalReserve >= 0 && defaultReserve >= 0 && criticalReserve + defaultReserve <= 1)) {
            throw new IllegalArgumentException("the reserves must be at least 0 and at most 1 together, were critical "
                    + criticalReserve + " and default " + defaultReserve);
        }
        this.criticalReserve = criticalReserve;
        this.defaultReserve = defaultReserve;
    }

    /** A request admitted: leave it once, when it ends. */
    public final class Slot {

        private final int inFlightAtEntry;
        private final long enteredNanos;
        private boolean left;

        private Slot(int inFlightAtEntry, long enteredNanos) {
            this.inFlightAtEntry = inFlightAtEntry;
            this.enteredNanos = enteredNanos;
        }

        /**
         * Ends the request at {@code nowNanos} (of {@link System#nanoTime()}, or the clock given on entry): the
         * limit learns from its latency, or from its failure if {@code dropped}. Does nothing the second time.
         */
        public void leave(long nowNanos, boolean dropped) {
            synchronized (OverloadGuard.this) {
                if (left) {
                    return;
                }
                left = true;
                inFlight--;
                limit.sample(nowNanos - enteredNanos, inFlightAtEntry, dropped);
            }
        }

        /** Ends the request without teaching the limit anything (it was cancelled, or never reached the service). */
        public void abandon() {
            synchronized (OverloadGuard.this) {
                if (!left) {
                    left = true;
                    inFlight--;
                }
            }
        }
    }

    /**
     * Admits a request of {@code priority} at {@code nowNanos}, or refuses it (null) when the requests in flight
     * leave no room for its priority.
     */
    public synchronized Slot tryEnter(Priority priority, long nowNanos) {
        Objects.requireNonNull(priority, "priority");
        if (inFlight >= ceiling(priority)) {
            return null;
        }
        inFlight++;
        return new Slot(inFlight, nowNanos);
    }

    /** Returns how many requests of {@code priority} may be in flight with the limit as it is now (at least 1). */
    synchronized int ceiling(Priority priority) {
        int learnt = limit.limit();
        double share = switch (priority) {
            case CRITICAL -> 1;
            case DEFAULT -> 1 - criticalReserve;
            case SHEDDABLE -> 1 - criticalReserve - defaultReserve;
        };
        return Math.max(1, (int) Math.floor(learnt * share));
    }

    /** Returns the learnt limit now. */
    public synchronized int limit() {
        return limit.limit();
    }

    /** Returns how many requests are in flight now. */
    public synchronized int inFlight() {
        return inFlight;
    }
}
