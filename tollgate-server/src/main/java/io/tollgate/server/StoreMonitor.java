package io.tollgate.server;

import io.tollgate.guard.GuardedRateLimiter;
import io.tollgate.spi.OpenedStore;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Knows whether the store answers: asks it every second and on every readiness probe, and logs one line
 * whenever that changes; the line that says the store answers again says how long it did not, and how many
 * decisions the failure policy made meanwhile. The in-memory store always answers. Redis is unavailable when it cannot be reached,
 * answers an error, or leaves a {@code PING} unanswered for as long as the limiter waits before it counts Redis
 * as down ({@link GuardedRateLimiter#DOWN_AFTER_MICROS}, two seconds): an answer that merely misses the time
 * budget of a decision, as one may on a busy machine, is not an outage. Thread-safe.
 */
final class StoreMonitor implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /** How long a ping may take before Redis counts as unavailable. */
    private static final Duration PATIENCE = Duration.ofNanos(GuardedRateLimiter.DOWN_AFTER_MICROS * 1_000);

    /** The store asked; null for one that always answers. */
    private final OpenedStore remote;

    private final String description;
    private final ScheduledExecutorService probes;
    /** How many decisions the failure policy has made so far, as the metrics count them. */
    private final LongSupplier degradedDecisions;

    private Optional<String> last = Optional.empty();
    /** When this monitor found the store not answering, of {@link System#nanoTime()}. */
    private long downSinceNanos;

    /** How many decisions the failure policy had made when the store last answered. */
    private long degradedBefore;

    private Consumer<Boolean> listener = answers -> {};

    private StoreMonitor(OpenedStore remote, String description, LongSupplier degradedDecisions) {
        this.remote = remote;
        this.description = description;
        this.degradedDecisions = degradedDecisions;
        this.probes = remote == null
                ? null
                : Executors.newSingleThreadScheduledExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "tollgate-store-monitor");
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /** Returns a monitor of a store that always answers. */
    static StoreMonitor memory() {
        return new StoreMonitor(null, "memory", () -> 0);
    }

    /**
     * Returns a monitor of {@code store}: one in this process always answers; another is asked every second from
     * now on.
     *
     * @param degradedDecisions how many decisions the failure policy has made so far, for the line that says
     *     the store answers again
     */
    static StoreMonitor of(OpenedStore store, String description, LongSupplier degradedDecisions) {
        if (store.inProcess()) {
            return memory();
        }
        StoreMonitor monitor = new StoreMonitor(store, description, degradedDecisions);
        monitor.probes.scheduleWithFixedDelay(monitor::check, 1, 1, TimeUnit.SECONDS);
        return monitor;
    }

    /** Asks the store now: empty when it answers, or why it does not. Never completes exceptionally. */
    CompletionStage<Optional<String>> check() {
        if (remote == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return remote.ping(PATIENCE).thenApply(result -> {
            changed(result);
            return result;
        });
    }

    private synchronized void changed(Optional<String> now) {
        if (now.isPresent() && last.isEmpty()) {
            downSinceNanos = System.nanoTime();
            LOG.log(
                    Level.WARNING,
                    "store {0} is unavailable: {1}; deciding by the failure policy until it answers",
                    description,
                    now.get().endsWith(".") ? now.get().substring(0, now.get().length() - 1) : now.get());
        } else if (now.isEmpty() && last.isPresent()) {
            long degraded = Math.max(0, degradedDecisions.getAsLong() - degradedBefore);
            LOG.log(
                    Level.INFO,
                    "store {0} answers again after {1} s; the failure policy made {2} {3} meanwhile",
                    description,
                    String.format(Locale.ROOT, "%.1f", (System.nanoTime() - downSinceNanos) / 1e9),
                    Long.toString(degraded),
                    degraded == 1 ? "decision" : "decisions");
        }
        if (now.isPresent() != last.isPresent()) {
            listener.accept(now.isEmpty());
        }
        if (now.isEmpty()) {
            // The count of an outage starts at the last answer before it: the decisions degraded before this
            // monitor noticed are the outage's too
            degradedBefore = degradedDecisions.getAsLong();
        }
        last = now;
    }

    /**
     * Counts the failure policy's decisions of an outage from the count now, whatever the store's state: the
     * warm-up's decisions, which a late answer may have left to the failure policy, have just been taken out of
     * the meters ({@link ServerMetrics#forgetWarmUp}), and the count they leave is the new start.
     */
    synchronized void countFromNow() {
        degradedBefore = degradedDecisions.getAsLong();
    }

    /** Tells {@code listener} whether the store answers each time that changes, from now on. */
    synchronized void onChange(Consumer<Boolean> listener) {
        this.listener = listener;
    }

    @Override
    public void close() {
        if (probes != null) {
            probes.shutdownNow();
        }
    }
}
