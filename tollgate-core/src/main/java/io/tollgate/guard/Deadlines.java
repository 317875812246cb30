package io.tollgate.guard;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * Ends the calls to the store that outlast the limiter's time budget, by completing them with a {@link
 * TimeoutException}.
 *
 * <p>Every call has the same budget, so calls reach their deadlines in the order they started. One queue in
 * that order and one thread that sleeps until the deadline of the oldest call still running therefore do
 * what a timer task per call would ({@link CompletableFuture#orTimeout}), for a fraction of the cost: a
 * timer task is inserted into a shared priority queue and removed again, under its lock, for every
 * decision, which took about a sixth of the JVM's processor time in a batched load test (JFR samples). A call started
 * while another thread was between reading the clock and queueing its own may time out late by that
 * interval.
 *
 * <p>The budget is the store's time, not this process's. While calls run, the thread wakes at least every
 * millisecond; when it wakes more than {@link #STALL_NANOS} later than it asked to, this process (or the whole
 * machine) was not running for that long, and an answer that came in time may be waiting, unread, in the
 * store's socket, whose reader was held up too. That time is added up, and each call's deadline moves by what
 * was added up since it started, at most one budget more: a process that did not run is not the store being
 * late. (A later call may then wait behind an earlier one's moved deadline, as long as that.)
 *
 * <p>Likewise, a call whose {@link StoreAnswer} has arrived by its deadline, and waits for this process to
 * deliver it, is given one more budget for that, rather than being ended with its answer in hand; it goes to
 * the back of the queue, whose calls all have earlier deadlines than its new one.
 *
 * <p>And a call whose answer has not arrived, but names the thread that will read it ({@link
 * StoreAnswer#reader()}), is ended only once that thread shows it keeps up: it is asked to run a task, and if it
 * runs it within {@link #STALL_NANOS}, it has read what the store sent by then (the task runs once the loop has read
 * its sockets), so the store is late, and the call is ended then, unless the request was {@linkplain
 * StoreAnswer#sent(long) written} less than half a budget before: the loop wrote it late, held up until then, and the
 * store has not had its time; that call, too, is given one more budget from when the thread was asked. If it runs
 * it later, it was held up (writing requests or reading replies behind other work, or waiting for a core) while
 * the store's reply may have been waiting in the socket: the call is given one more budget, from when the thread
 * was asked, and ended at its end if the answer has not arrived. (Two cold servers answering a burst of Envoy calls on two
 * busy cores were seen to hand a request to the event loop that wrote it 63 ms later, and to read a reply that
 * Redis sent 16 ms after the request and deliver it 47 ms later, behind the answers of another reply.)
 *
 * <p>Thread-safe. The thread is a daemon, parked while no call is running, and stops on {@link #close()}.
 */
final class Deadlines implements AutoCloseable {

    /**
     * How often the thread wakes while calls are running, to drop those that completed: they die young,
     * instead of piling up for a whole budget and reaching the old generation.
     */
    private static final long SWEEP_NANOS = 1_000_000;

    /** A wake-up later than asked for by more than this means that the thread did not run meanwhile. */
    static final long STALL_NANOS = 2_000_000;

    /**
     * How the thread waits, and the clock it reads: {@link LockSupport#parkNanos} and {@link System#nanoTime}, or a
     * test's stand-in (one that stalls, or time that passes only while the thread waits).
     */
    interface Parker {
        void parkNanos(Object blocker, long nanos);

        /** The clock every deadline is read on, in nanoseconds, as {@link System#nanoTime}. */
        default long nanoTime() {
            return System.nanoTime();
        }
    }

    /**
     * A call, its deadline, how much time this process had not run for when it started, the store's answer that
     * it waits for, if that may arrive before it is delivered (else null), and whether the thread that reads that
     * answer was asked whether it keeps up.
     */
    private record Call(
            CompletableFuture<?> future, long deadlineNanos, long stalledAtStart, StoreAnswer answer, boolean asked) {

        /** Whether the store's answer arrived, and waits for this process to deliver it. */
        boolean arrived() {
            return answer != null && answer.hasArrived();
        }
    }

    private final long budgetNanos;
    private final String budgetText;
    private final ConcurrentLinkedQueue<Call> running = new ConcurrentLinkedQueue<>();
    /** Calls whose reader kept up while their answer had not arrived: the store is late, they end now. */
    private final ConcurrentLinkedQueue<Call> storeLate = new ConcurrentLinkedQueue<>();

    private final Thread thread;
    private final Parker parker;
    /** A delay longer than this means a thread did not run meanwhile: {@link #STALL_NANOS} but in tests. */
    private final long stallNanos;

    private volatile boolean idle;
    private volatile boolean closed;

    /** How long the thread found that this process had not run, added up; written by the thread only. */
    private volatile long stalledNanos;

    Deadlines(Duration budget) {
        this(budget, LockSupport::parkNanos);
    }

    /** For tests: waits with {@code parker}. */
    Deadlines(Duration budget, Parker parker) {
        this(budget, parker, STALL_NANOS);
    }

    /**
     * For tests: waits with {@code parker}, and takes a delay over {@code stallNanos} for a thread that did not run
     * (a test on busy cores, where a thread may wait a few milliseconds for one, asks for more).
     */
    Deadlines(Duration budget, Parker parker, long stallNanos) {
        this.parker = parker;
        this.stallNanos = stallNanos;
        this.budgetNanos = budget.toNanos();
        this.budgetText = budget.toMillis() + " ms";
        this.thread = new Thread(this::expire, "tollgate-deadlines");
        thread.setDaemon(true);
        thread.start();
    }

    /** Completes {@code call} with a {@link TimeoutException} unless it completes within the budget. */
    <T> CompletableFuture<T> limit(CompletableFuture<T> call) {
        return limit(call, null);
    }

    /**
     * Completes {@code call} with a {@link TimeoutException} unless it completes within the budget or, if {@code
     * answer} (which completes {@code call} when delivered) arrives within the budget, within one budget more.
     */
    <T> CompletableFuture<T> limit(CompletableFuture<T> call, StoreAnswer answer) {
        if (!call.isDone()) {
            running.offer(new Call(call, parker.nanoTime() + budgetNanos, stalledNanos, answer, false));
            if (idle) {
                LockSupport.unpark(thread);
            }
        }
        return call;
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
    }

    private void expire() {
        while (!closed) {
            for (Call late = storeLate.poll(); late != null; late = storeLate.poll()) {
                if (!late.arrived()) {
                    timeOut(late);
                }
            }
            Call oldest = running.peek();
            if (oldest == null) {
                idle = true;
                // A call queued after the peek above either sees idle and unparks, or is seen here.
                if (running.isEmpty() && !closed) {
                    LockSupport.park(this);
                }
                idle = false;
            } else if (oldest.future().isDone()) {
                running.poll();
            } else {
                long now = parker.nanoTime();
                long stalled = Math.min(stalledNanos - oldest.stalledAtStart(), budgetNanos);
                long left = oldest.deadlineNanos() + stalled - now;
                if (left > 0) {
                    // Every later call's deadline is no earlier, but for time stalled: none is due before this one.
                    long asked = Math.min(left, SWEEP_NANOS);
                    parker.parkNanos(this, asked);
                    long overslept = parker.nanoTime() - now - asked;
                    if (overslept > stallNanos) {
                        stalledNanos += overslept;
                    }
                } else if (oldest.arrived()) {
                    running.poll();
                    running.offer(new Call(oldest.future(), now + budgetNanos, stalledNanos, null, true));
                } else if (!oldest.asked()
                        && oldest.answer() != null
                        && oldest.answer().reader() != null) {
                    running.poll();
                    Call waiting = new Call(oldest.future(), now + budgetNanos, stalledNanos, oldest.answer(), true);
                    running.offer(waiting);
                    askReader(waiting, now);
                } else {
                    running.poll();
                    timeOut(oldest);
                }
            }
        }
    }

    /**
     * Asks the thread that reads {@code call}'s answer to run a task; if it runs it in time and the answer has not
     * arrived, the store is late, and the call ends at once (on this thread, as every call that runs out of time).
     */
    private void askReader(Call call, long askedNanos) {
        Runnable keptUp = () -> {
            long now = parker.nanoTime();
            if (now - askedNanos <= stallNanos && !call.arrived() && !writtenLately(call.answer(), now)) {
                storeLate.offer(call);
                LockSupport.unpark(thread);
            }
        };
        try {
            call.answer().reader().execute(keptUp);
        } catch (RejectedExecutionException closing) {
            storeLate.offer(call); // the reader has stopped: no answer will arrive
        }
    }

    /**
     * Whether the request was written to the store less than half a budget before {@code now}: its reader, held up
     * until then, wrote it late, and the store has not had its time yet.
     */
    private boolean writtenLately(StoreAnswer answer, long now) {
        long sent = answer.sentNanos();
        return sent != 0 && now - sent < budgetNanos / 2;
    }

    private void timeOut(Call call) {
        call.future().completeExceptionally(new TimeoutException("no answer within " + budgetText));
    }
}
