package io.tollgate.overload;

import io.tollgate.Priority;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Admits requests to the service under a limit on how many are in flight at once, learnt from the service's own
 * latency and failures ({@link VegasLimit}), by priority.
 *
 * <p>Each priority may fill the limit up to its ceiling: a {@link Priority#CRITICAL} request the whole limit, a
 * {@link Priority#DEFAULT} one the limit less the critical reserve, a {@link Priority#SHEDDABLE} one the limit less
 * both reserves. A request that finds no room for its priority waits, at most {@code maxWaitNanos}, in a queue of at
 * most as many requests as the limit; each slot that frees goes to the highest priority waiting, and within a
 * priority to the request that came last (under overload, the first to come are the ones whose clients are about to
 * give up: serving the last keeps the wait short for those served, as Facebook's adaptive LIFO and Netflix's LIFO
 * limiter do; priority before arrival is Uber's Cinnamon's order). A full queue makes room for a request by refusing
 * the oldest of a lower priority, or refuses the request. So as the service saturates, sheddable requests are
 * refused first, then default ones, while critical ones are served: a refused request is answered {@code 503} at
 * once, and took nothing from anyone's bucket.
 *
 * <p>{@link #enter} answers with a future that is complete at once when the request is admitted or refused
 * outright, and otherwise completes when it is admitted (a {@link Slot}) or refused (null), on the thread that
 * freed its slot or called {@link #expire}; callers hop to their own executor. The guard keeps no timer: whoever
 * queues a request calls {@link #expire} at its deadline ({@link #maxWaitNanos()} after it entered). Each admitted
 * request holds a {@link Slot}, which it must leave exactly once, saying how it ended. Thread-safe: one lock,
 * futures completed outside it.
 */
public final class OverloadGuard {

    private static final CompletableFuture<Slot> REFUSED = CompletableFuture.completedFuture(null);

    private final VegasLimit limit;
    private final double criticalReserve;
    private final double defaultReserve;
    private final long maxWaitNanos;

    /** Waiting requests by priority ordinal, the newest first. */
    @SuppressWarnings("unchecked")
    private final ArrayDeque<Waiter>[] waiting = new ArrayDeque[Priority.values().length];

    private int waiters;
    private int inFlight;

    /**
     * @param min the least the limit may fall to, at least 1
     * @param initial the limit before anything is learnt
     * @param max the most the limit may grow to
     * @param criticalReserve the share of the limit only critical requests may use, 0 to 1 (0.1: a tenth)
     * @param defaultReserve the share beyond it that sheddable requests may not use, 0 to 1
     * @param maxWaitNanos how long a request may wait for room, 0 to refuse it at once
     * @throws IllegalArgumentException naming the value, unless {@code 1 <= min <= initial <= max}, the reserves
     *     together are at most 1 and the wait is at least 0
     */
    public OverloadGuard(
            int min, int initial, int max, double criticalReserve, double defaultReserve, long maxWaitNanos) {
        this.limit = new VegasLimit(min, initial, max);
        if (!(criticalReserve >= 0 && defaultReserve >= 0 && criticalReserve + defaultReserve <= 1)) {
            throw new IllegalArgumentException("the reserves must be at least 0 and at most 1 together, were critical "
                    + criticalReserve + " and default " + defaultReserve);
        }
        if (maxWaitNanos < 0) {
            throw new IllegalArgumentException("the wait must be at least 0 ns, was " + maxWaitNanos);
        }
        this.criticalReserve = criticalReserve;
        this.defaultReserve = defaultReserve;
        this.maxWaitNanos = maxWaitNanos;
        for (int i = 0; i < waiting.length; i++) {
            waiting[i] = new ArrayDeque<>();
        }
    }

    /** A request admitted: leave it once, when it ends. */
    public final class Slot {

        private final int inFlightAtEntry;
        private final long waitedNanos;
        private long enteredNanos;
        private boolean left;

        private Slot(int inFlightAtEntry, long enteredNanos, long waitedNanos) {
            this.inFlightAtEntry = inFlightAtEntry;
            this.enteredNanos = enteredNanos;
            this.waitedNanos = waitedNanos;
        }

        /**
         * Says that the request reaches the service at {@code nowNanos}, after checks of its own since it was
         * admitted (a client's bucket): its latency counts from here, so that the limit learns the service's time.
         */
        public void begin(long nowNanos) {
            synchronized (OverloadGuard.this) {
                enteredNanos = nowNanos;
            }
        }

        /** Returns how long the request waited for room before it was admitted, 0 if it found room at once. */
        public long waitedNanos() {
            return waitedNanos;
        }

        /**
         * Ends the request at {@code nowNanos} (of {@link System#nanoTime()}, or the clock the caller keeps): the
         * limit learns from its latency since it was admitted, or from its failure if {@code dropped}, and the slot
         * goes to a waiting request if one fits. Does nothing the second time.
         */
        public void leave(long nowNanos, boolean dropped) {
            end(nowNanos, true, dropped);
        }

        /**
         * Ends the request at {@code nowNanos} without teaching the limit anything (it was cancelled, or never reached
         * the service). Does nothing the second time.
         */
        public void abandon(long nowNanos) {
            end(nowNanos, false, false);
        }

        private void end(long nowNanos, boolean learn, boolean dropped) {
            List<Admitted> admitted;
            synchronized (OverloadGuard.this) {
                if (left) {
                    return;
                }
                left = true;
                inFlight--;
                if (learn) {
                    limit.sample(nowNanos - enteredNanos, inFlightAtEntry, dropped, nowNanos);
                }
                admitted = admitWaiting(nowNanos);
            }
            complete(admitted, nowNanos);
        }
    }

    /**
     * Admits a request of {@code priority} arriving at {@code nowNanos}, queues it, or refuses it.
     *
     * @return a future with the request's slot once admitted, or null once refused; complete at once unless the
     *     request waits
     */
    public CompletableFuture<Slot> enter(Priority priority, long nowNanos) {
        Objects.requireNonNull(priority, "priority");
        Waiter displaced = null;
        CompletableFuture<Slot> answer;
        List<Waiter> expired;
        synchronized (this) {
            expired = expireLocked(nowNanos);
            if (inFlight < ceiling(priority) && !waitingAtOrAbove(priority)) {
                answer = CompletableFuture.completedFuture(admit(nowNanos, 0));
            } else if (maxWaitNanos == 0) {
                answer = REFUSED;
            } else {
                if (waiters >= limit.limit()) {
                    displaced = oldestBelow(priority);
                }
                if (waiters >= limit.limit() && displaced == null) {
                    answer = REFUSED;
                } else {
                    Waiter waiter = new Waiter(nowNanos, new CompletableFuture<>());
                    waiting[priority.ordinal()].addFirst(waiter);
                    waiters++;
                    answer = waiter.answer;
                }
            }
        }
        if (displaced != null) {
            displaced.answer.complete(null);
        }
        refuse(expired);
        return answer;
    }

    /**
     * Refuses the requests that have waited {@link #maxWaitNanos()} or longer by {@code nowNanos}: call it at a
     * queued request's deadline.
     */
    public void expire(long nowNanos) {
        List<Waiter> expired;
        synchronized (this) {
            expired = expireLocked(nowNanos);
        }
        refuse(expired);
    }

    /** Returns how long a request may wait for room, in nanoseconds. */
    public long maxWaitNanos() {
        return maxWaitNanos;
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

    /** Returns how many requests wait for room now. */
    public synchronized int waiting() {
        return waiters;
    }

    private Slot admit(long nowNanos, long waitedNanos) {
        inFlight++;
        return new Slot(inFlight, nowNanos, waitedNanos);
    }

    private boolean waitingAtOrAbove(Priority priority) {
        for (int p = 0; p <= priority.ordinal(); p++) {
            if (!waiting[p].isEmpty()) {
                return true;
            }
        }
        return false;
    }

    /** Removes and returns the longest-waiting request of the lowest priority below {@code priority}, or null. */
    private Waiter oldestBelow(Priority priority) {
        for (int p = waiting.length - 1; p > priority.ordinal(); p--) {
            if (!waiting[p].isEmpty()) {
                waiters--;
                return waiting[p].pollLast();
            }
        }
        return null;
    }

    /** Admits waiting requests, the highest priority and the newest first, while their ceilings leave room. */
    private List<Admitted> admitWaiting(long nowNanos) {
        List<Admitted> admitted = null;
        for (Priority priority : Priority.values()) {
            ArrayDeque<Waiter> queue = waiting[priority.ordinal()];
            while (!queue.isEmpty() && inFlight < ceiling(priority)) {
                Waiter waiter = queue.pollFirst();
                waiters--;
                if (admitted == null) {
                    admitted = new ArrayList<>(2);
                }
                admitted.add(new Admitted(waiter, admit(nowNanos, nowNanos - waiter.arrivedNanos)));
            }
            if (!queue.isEmpty()) {
                break; // the ceilings fall with the priority: no room here is no room below
            }
        }
        return admitted;
    }

    private List<Waiter> expireLocked(long nowNanos) {
        if (waiters == 0) {
            return null;
        }
        List<Waiter> expired = null;
        for (ArrayDeque<Waiter> queue : waiting) {
            while (!queue.isEmpty() && nowNanos - queue.peekLast().arrivedNanos >= maxWaitNanos) {
                if (expired == null) {
                    expired = new ArrayList<>();
                }
                expired.add(queue.pollLast());
                waiters--;
            }
        }
        return expired;
    }

    private static void complete(List<Admitted> admitted, long nowNanos) {
        if (admitted != null) {
            for (Admitted each : admitted) {
                if (!each.waiter.answer.complete(each.slot)) {
                    each.slot.abandon(nowNanos); // its caller gave up on it: the room goes to the next
                }
            }
        }
    }

    private static void refuse(List<Waiter> refused) {
        if (refused != null) {
            for (Waiter waiter : refused) {
                waiter.answer.complete(null);
            }
        }
    }

    private record Waiter(long arrivedNanos, CompletableFuture<Slot> answer) {}

    private record Admitted(Waiter waiter, Slot slot) {}
}
