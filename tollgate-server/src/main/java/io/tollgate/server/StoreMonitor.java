package io.tollgate.server;

import io.tollgate.internal.guard.GuardedRateLimiter;
import io.tollgate.redis.RedisRateLimiter;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Knows whether the store answers: asks it every second and on every readiness probe, and logs one line
 * whenever that changes. The in-memory store always answers. Redis is unavailable when it cannot be reached,
 * answers an error, or leaves a {@code PING} unanswered for as long as the limiter waits before it counts Redis
 * as down ({@link GuardedRateLimiter#DOWN_AFTER_MICROS}, two seconds): an answer that merely misses the time
 * budget of a decision, as one may on a busy machine, is not an outage. Thread-safe.
 */
final class StoreMonitor implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    /** How long a ping may take before Redis counts as unavailable. */
    private static final Duration PATIENCE = Duration.ofNanos(GuardedRateLimiter.DOWN_AFTER_MICROS * 1_000);

    private final RedisRateLimiter redis;
    private final String description;
    private final ScheduledExecutorService probes;
    private Optional<String> last = Optional.empty();
    private Consumer<Boolean> listener = answers -> {};

    private StoreMonitor(RedisRateLimiter redis, String description) {
        this.redis = redis;
        this.description = description;
        this.probes = redis == null
                ? null
                : Executors.newSingleThreadScheduledExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "tollgate-store-monitor");
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /** Returns a monitor of a store that always answers. */
    static StoreMonitor memory() {
        return new StoreMonitor(null, "memory");
    }

    /** Returns a monitor of a Redis store, already asking it every second. */
    static StoreMonitor redis(RedisRateLimiter redis, String description) {
        StoreMonitor monitor = new StoreMonitor(redis, description);
        monitor.probes.scheduleWithFixedDelay(monitor::check, 1, 1, TimeUnit.SECONDS);
        return monitor;
    }

    /** Asks the store now: empty when it answers, or why it does not. Never completes exceptionally. */
    CompletionStage<Optional<String>> check() {
        if (redis == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return redis.ping(PATIENCE).thenApply(result -> {
            changed(result);
            return result;
        });
    }

    private synchronized void changed(Optional<String> now) {
        if (now.isPresent() && last.isEmpty()) {
            LOG.log(
                    Level.WARNING,
                    "store {0} is unavailable: {1}; deciding by the failure policy until it answers",
                    description,
                    now.get());
        } else if (now.isEmpty() && last.isPresent()) {
            LOG.log(Level.INFO, "store {0} answers again", description);
        }
        if (now.isPresent() != last.isPresent()) {
            listener.accept(now.isEmpty());
        }
        last = now;
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
