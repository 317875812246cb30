package io.tollgate.spi;

import io.tollgate.RateLimiter;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * A store that is open: its limiter, how to ask whether it answers, and, where other instances share it, how to
 * share summaries of who is limited with them. The surface that opened it closes it, after everything that uses its limiter.
 *
 * <p>Implementations are thread-safe.
 */
public interface OpenedStore extends AutoCloseable {

    /** Returns the limiter on the store; it tells {@link RateLimiter#onDecision listeners} of every decision. */
    RateLimiter limiter();

    /** Returns the section that chose the store, such as {@code memory}: the store's kind, for health details. */
    String name();

    /**
     * Asks the store whether it answers within its own time budget, for health checks: empty when it does, or
     * why not. The stage never completes exceptionally.
     */
    CompletionStage<Optional<String>> ping();

    /**
     * Asks the store whether it answers, waiting at most {@code patience}: empty when it does, or why not. The
     * stage never completes exceptionally. A store in this process answers at once.
     */
    CompletionStage<Optional<String>> ping(Duration patience);

    /** Returns what a health check shows of the store beside whether it answers, such as its circuit's state. */
    Map<String, String> details();

    /** Returns whether the store is in this process, and so always answers. */
    boolean inProcess();

    /**
     * Starts publishing {@code summaries} (asked for each time) to the other instances that share the store, and
     * returns the exchange, to close before the store; null where no other instance shares it.
     */
    SummaryExchange shareSummaries(Supplier<byte[]> summaries);

    /** Closes the limiter and whatever the store holds open (connections, threads). */
    @Override
    void close();

    /**
     * Returns a store in this process: it always answers, and no other instance shares it.
     *
     * @param name the section that chose the store, such as {@code memory}
     * @param limiter the limiter on it
     * @param close what closing the store does (nothing, for a limiter that holds nothing open)
     * @throws NullPointerException if an argument is null
     */
    static OpenedStore inProcess(String name, RateLimiter limiter, Runnable close) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(limiter, "limiter");
        Objects.requireNonNull(close, "close");
        return new OpenedStore() {
            @Override
            public RateLimiter limiter() {
                return limiter;
            }

            @Override
            public String name() {
                return name;
            }

            @Override
            public CompletionStage<Optional<String>> ping() {
                return CompletableFuture.completedFuture(Optional.empty());
            }

            @Override
            public CompletionStage<Optional<String>> ping(Duration patience) {
                return ping();
            }

            @Override
            public Map<String, String> details() {
                return Map.of();
            }

            @Override
            public boolean inProcess() {
                return true;
            }

            @Override
            public SummaryExchange shareSummaries(Supplier<byte[]> summaries) {
                return null;
            }

            @Override
            public void close() {
                close.run();
            }

            @Override
            public String toString() {
                return "OpenedStore[" + name + ", in process]";
            }
        };
    }
}
