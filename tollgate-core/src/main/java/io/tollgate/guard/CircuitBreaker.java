package io.tollgate.guard;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Stops calling the store while it is failing, so that callers get their fallback at once instead of waiting
 * out a time budget on every request.
 *
 * <p>Closed, it lets every call through and counts consecutive failures; after {@code threshold} of them
 * it opens for a pause. Open, it lets nothing through until the pause is over; then the next call is let
 * through as a probe (half-open) while every other call still gets the fallback. A successful probe closes
 * the breaker; a failed one opens it again for twice as long, up to {@code longestPause}. Any success
 * resets the count and the pause.
 *
 * <p>Lock-free: the state is one immutable object swapped by compare-and-set.
 */
public final class CircuitBreaker {

    /** The state, for metrics: closed 0, half-open 1, open 2. */
    public enum State {
        CLOSED,
        HALF_OPEN,
        OPEN
    }

    /**
     * @param hard whether a failure of the current run came from the store (unreachable, an error), rather than
     *     only calls left unanswered ({@link #onStall})
     * @param firstStallMicros when the earliest call left unanswered in the current run was sent
     */
    private record Snapshot(
            State state, int failures, long pauseMicros, long openUntilMicros, boolean hard, long firstStallMicros) {

        Snapshot withOpenUntil(long until) {
            return new Snapshot(state, failures, pauseMicros, until, hard, firstStallMicros);
        }
    }

    private final int threshold;
    private final long firstPauseMicros;
    private final long longestPauseMicros;
    private final AtomicReference<Snapshot> snapshot;

    CircuitBreaker(int threshold, long firstPauseMicros, long longestPauseMicros) {
        this.threshold = threshold;
        this.firstPauseMicros = firstPauseMicros;
        this.longestPauseMicros = longestPauseMicros;
        this.snapshot = new AtomicReference<>(closed());
    }

    /** Returns whether a call may go to the store now; if it opens a half-open probe, this call is the probe. */
    boolean tryCall(long nowMicros) {
        for (; ; ) {
            Snapshot current = snapshot.get();
            switch (current.state) {
                case CLOSED:
                    return true;
                case HALF_OPEN:
                    return false; // one probe at a time
                default:
                    if (nowMicros < current.openUntilMicros) {
                        return false;
                    }
                    Snapshot probing = new Snapshot(
                            State.HALF_OPEN,
                            current.failures,
                            current.pauseMicros,
                            0,
                            current.hard,
                            current.firstStallMicros);
                    if (snapshot.compareAndSet(current, probing)) {
                        return true;
                    }
            }
        }
    }

    /** Records a call that the store answered. */
    void onSuccess() {
        Snapshot current = snapshot.get();
        if (current.state != State.CLOSED || current.failures != 0) {
            snapshot.set(closed());
        }
    }

    /**
     * Records an answer that came after its call's budget ran out: the store is alive, if slow. Closed, the
     * breaker forgets the failures counted so far (they were not consecutive); half-open, it closes, as the
     * answer may be the probe's own; open, it lets the next call through as a probe at once instead of waiting
     * out its pause.
     */
    void onLateAnswer() {
        for (; ; ) {
            Snapshot current = snapshot.get();
            Snapshot next;
            if (current.state == State.OPEN) {
                if (current.openUntilMicros == Long.MIN_VALUE) {
                    return;
                }
                next = current.withOpenUntil(Long.MIN_VALUE);
            } else if (current.state == State.HALF_OPEN || current.failures != 0) {
                next = closed();
            } else {
                return;
            }
            if (snapshot.compareAndSet(current, next)) {
                return;
            }
        }
    }

    /** Records a call that failed for a reason on the store's side: it could not be reached, or answered an error. */
    void onFailure(long nowMicros) {
        failed(nowMicros, true, Long.MAX_VALUE);
    }

    /**
     * Records a call that the store left unanswered too long (sent at {@code sentMicros}): a failure as {@link
     * #onFailure} counts it, but the store counts as {@link #down} only once it has left calls unanswered for a
     * while, as a busy caller can be slow to read an answer that the store gave in time.
     */
    void onStall(long sentMicros, long nowMicros) {
        failed(nowMicros, false, sentMicros);
    }

    private void failed(long nowMicros, boolean hard, long sentMicros) {
        for (; ; ) {
            Snapshot current = snapshot.get();
            boolean anyHard = current.hard || hard;
            long firstStall = Math.min(current.firstStallMicros, sentMicros);
            Snapshot next;
            if (current.state == State.HALF_OPEN) {
                long pause = Math.min(longestPauseMicros, current.pauseMicros * 2);
                next = new Snapshot(State.OPEN, current.failures + 1, pause, nowMicros + pause, anyHard, firstStall);
            } else if (current.state == State.OPEN) {
                return; // a call sent before the breaker opened: already counted as open
            } else if (current.failures + 1 >= threshold) {
                next = new Snapshot(
                        State.OPEN,
                        current.failures + 1,
                        firstPauseMicros,
                        nowMicros + firstPauseMicros,
                        anyHard,
                        firstStall);
            } else {
                next = new Snapshot(State.CLOSED, current.failures + 1, firstPauseMicros, 0, anyHard, firstStall);
            }
            if (snapshot.compareAndSet(current, next)) {
                return;
            }
        }
    }

    /**
     * Returns whether the store counts as down now: the breaker is not closed, and the store failed outright or
     * has left calls unanswered for {@code stalledMicros} or more. Open but not down, calls are not made, but
     * the store may still be deciding those it has.
     */
    boolean down(long nowMicros, long stalledMicros) {
        Snapshot current = snapshot.get();
        return current.state != State.CLOSED && (current.hard || nowMicros - current.firstStallMicros >= stalledMicros);
    }

    public State state() {
        return snapshot.get().state;
    }

    private Snapshot closed() {
        return new Snapshot(State.CLOSED, 0, firstPauseMicros, 0, false, Long.MAX_VALUE);
    }
}
