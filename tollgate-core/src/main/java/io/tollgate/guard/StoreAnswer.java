package io.tollgate.guard;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The store's answer to one request, for a store that answers several requests with one reply: that reply
 * reaches this process at one moment, but each request's answer is delivered in turn, after the callers of the
 * requests before it have run on the same thread. The store marks every answer of a reply {@linkplain
 * #arrived() arrived} before it delivers the first, and the time budget counts until arrival: what comes after
 * is this process's time, not the store's being late. (A burst of twenty requests answered by one reply, whose
 * callers each took two milliseconds on a cold path, had its last answers decided by the failure policy while
 * they waited, in memory, for their turn.)
 *
 * <p>An answer may also name the thread that will read its reply, as an {@link Executor} that runs a task on it
 * once it has read what its sockets held (a connection's event loop): when the budget runs out before the reply
 * arrived, that thread is asked to run a task, and if it runs it late, it was held up (writing the request or
 * reading the reply behind other work, or not given a core), and the reply may be waiting unread: this process's
 * time, not the store's. And the thread that writes the request may note {@linkplain #sent(long) when}: a request
 * that this process wrote late, held up before it, has not given the store its time yet.
 *
 * <p>Thread-safe: marked by the thread that reads the store's reply, read by the thread that keeps the deadlines.
 */
public final class StoreAnswer extends CompletableFuture<StoreReply> {

    private final Executor reader;
    private volatile boolean arrived;
    private volatile long sentNanos; // 0 while not known to be written

    /** Creates an answer not arrived yet, with no reader to ask. */
    public StoreAnswer() {
        this(null);
    }

    /**
     * Creates an answer not arrived yet, whose reply {@code reader} will read (and which sends the request, if
     * it is not sent yet, before it runs a task given after this call, and reads what its sockets hold before it
     * runs the task); null if not known.
     */
    public StoreAnswer(Executor reader) {
        this.reader = reader;
    }

    /**
     * Returns what runs a task on the thread that will read the reply, once that thread has read what its sockets
     * held when the task was given, or null if not known.
     */
    public Executor reader() {
        return reader;
    }

    /**
     * Notes that the store's reply holding this answer has reached this process, before the answer is
     * delivered by {@link #complete}.
     */
    public void arrived() {
        arrived = true;
    }

    /** Returns whether the store's reply holding this answer has reached this process. */
    public boolean hasArrived() {
        return arrived;
    }

    /**
     * Notes that the request was written to the store's connection at {@code nanos} ({@link System#nanoTime()}'s
     * terms); called by the thread that wrote it, when it knows the write was done there and then (not queued for
     * another thread). One reading of the clock serves a whole batch.
     */
    public void sent(long nanos) {
        sentNanos = nanos == 0 ? 1 : nanos;
    }

    /**
     * Returns when the request was written to the store's connection, in {@link System#nanoTime()}'s terms, or 0
     * if that is not known (not written yet, or written by a thread that does not say).
     */
    public long sentNanos() {
        return sentNanos;
    }
}
