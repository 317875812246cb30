package io.tollgate.internal.guard;

import java.util.concurrent.CompletableFuture;

/**
 * The store's answer to one request, for a store that answers several requests with one reply: that reply
 * reaches this process at one moment, but each request's answer is delivered in turn, after the callers of the
 * requests before it have run on the same thread. The store marks every answer of a reply {@linkplain
 * #arrived() arrived} before it delivers the first, and the time budget counts until arrival: what comes after
 * is this process's time, not the store's being late. (A burst of twenty requests answered by one reply, whose
 * callers each took two milliseconds on a cold path, had its last answers decided by the failure policy while
 * they waited, in memory, for their turn.)
 *
 * <p>Thread-safe: marked by the thread that reads the store's reply, read by the thread that keeps the deadlines.
 */
public final class StoreAnswer extends CompletableFuture<StoreReply> {

    private volatile boolean arrived;

    /** Creates an answer not arrived yet. */
    public StoreAnswer() {}

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
}
