package io.tollgate.spi;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Summaries of who is limited, shared through the store the instances share, such as Redis: this instance publishes its own at a short interval (each
 * lasting a few intervals, so that a stopped instance drops out), and reads the other live instances' own. The
 * bytes are opaque here. Thread-safe.
 */
public interface SummaryExchange extends AutoCloseable {

    /** Returns the store's name, for what a read says when the store did not answer, such as {@code Redis}. */
    String storeName();

    /**
     * Returns the summaries the other live instances last published; the stage fails if the store cannot be
     * asked.
     */
    CompletableFuture<List<byte[]>> others();

    /**
     * What a read of the other instances' summaries found.
     *
     * @param summaries their summaries; none when they could not be read
     * @param unshared why they could not be read, or null
     */
    record Others(List<byte[]> summaries, String unshared) {

        /** Nothing to read: the store is not shared. */
        public static final Others NONE = new Others(List.of(), null);
    }

    /**
     * Reads the other instances' summaries, waiting at most {@code wait}; none, and why, where the store cannot be
     * asked in time. Blocks: call it where a thread may wait.
     */
    default Others readOthers(Duration wait) {
        try {
            return new Others(others().get(wait.toMillis(), TimeUnit.MILLISECONDS), null);
        } catch (TimeoutException e) {
            return new Others(List.of(), storeName() + " did not answer within " + wait.toMillis() + " ms");
        } catch (ExecutionException e) {
            return new Others(List.of(), String.valueOf(cause(e).getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Others(List.of(), "interrupted");
        }
    }

    /** The failure inside {@code failure}, where a future wrapped one. */
    private static Throwable cause(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof ExecutionException || cause instanceof CompletionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /** Stops publishing and withdraws this instance's summaries, waiting a moment at most. */
    @Override
    void close();
}
