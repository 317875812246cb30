package io.tollgate.http;

import io.tollgate.Priority;
import io.tollgate.overload.OverloadGuard;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Protects the service behind Tollgate from overload, whatever each client's limit: keeps the requests in flight
 * to it under a limit learnt from its own latency and failures (TCP Vegas, once per round trip), and as the limit
 * fills refuses the lowest {@link Priority} first, with a reserve kept for the higher ones. A request that finds no
 * room waits at most {@link Settings#maxWait()}; the room that frees goes to the highest priority waiting, then to
 * the newest. A request refused is answered {@code 503} with {@code Retry-After} and a problem of type {@value
 * #OVERLOADED_TYPE}, before any bucket is charged (docs/load-shedding.md).
 *
 * <p>Per instance, with no store round trip: it protects the service from this instance's share of the load. One
 * per service: give the same one to every {@link RequestLimiter} that a reload of the rules builds, so that what
 * it learnt and the requests in flight carry over ({@link RequestLimiter.Builder#overload}). The limit learns from
 * how each admitted request ended, which the surface reports through {@link RequestLimiter#settle} and {@link
 * RequestLimiter#release} (or {@link RequestLimiter#finish}): a status of 500, 502, 503 or 504 is a failure of an
 * overloaded service (502 and 504 are what a proxy answers for a refused connection and a timeout).
 *
 * <p>Thread-safe.
 */
public final class OverloadProtection {

    /** The problem type of the answer to a request refused because the service is overloaded. */
    public static final String OVERLOADED_TYPE = "urn:tollgate:overloaded";

    /** The status of that answer. */
    public static final int OVERLOADED_STATUS = 503;

    private static final ScheduledThreadPoolExecutor EXPIRY = expiry();

    private final Settings settings;
    private final OverloadGuard guard;

    /**
     * Returns protection with {@code settings}.
     *
     * @throws NullPointerException if settings is null
     */
    public OverloadProtection(Settings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.guard = new OverloadGuard(
                settings.minLimit(),
                settings.initialLimit(),
                settings.maxLimit(),
                settings.criticalReserve(),
                settings.defaultReserve(),
                settings.maxWait().toNanos());
    }

    /**
     * The settings of {@link OverloadProtection}: the bounds of the learnt limit, the reserves of the higher
     * priorities, how long a request may wait for room, and the {@code Retry-After} of a refusal.
     *
     * @param minLimit the least the limit on requests in flight may fall to, at least 1
     * @param initialLimit the limit before anything is learnt
     * @param maxLimit the most the limit may grow to
     * @param criticalReserve the share of the limit only critical requests may use, 0 to 1
     * @param defaultReserve the share beyond it that sheddable requests may not use, 0 to 1
     * @param maxWait how long a request may wait for room before it is refused; zero refuses at once
     * @param retryAfter what a refusal's {@code Retry-After} says, in whole seconds (rounded up, at least 1)
     */
    public record Settings(
            int minLimit,
            int initialLimit,
            int maxLimit,
            double criticalReserve,
            double defaultReserve,
            Duration maxWait,
            Duration retryAfter) {

        /**
         * @throws IllegalArgumentException naming the value, unless {@code 1 <= minLimit <= initialLimit <=
         *     maxLimit}, each reserve is between 0 and 1 and both together at most 1, maxWait is not negative and
         *     retryAfter is positive
         * @throws NullPointerException if maxWait or retryAfter is null
         */
        public Settings {
            Objects.requireNonNull(maxWait, "maxWait");
            Objects.requireNonNull(retryAfter, "retryAfter");
            if (minLimit < 1 || initialLimit < minLimit || maxLimit < initialLimit) {
                throw new IllegalArgumentException("overload limits must be 1 <= min-limit <= initial-limit <="
                        + " max-limit, were " + minLimit + ", " + initialLimit + " and " + maxLimit);
            }
            if (!(criticalReserve >= 0 && criticalReserve <= 1)) {
                throw new IllegalArgumentException("critical-reserve must be between 0 and 1, was " + criticalReserve);
            }
            if (!(defaultReserve >= 0 && defaultReserve <= 1)) {
                throw new IllegalArgumentException("default-reserve must be between 0 and 1, was " + defaultReserve);
            }
            if (criticalReserve + defaultReserve > 1) {
                throw new IllegalArgumentException("critical-reserve and default-reserve must be at most 1 together,"
                        + " were " + criticalReserve + " and " + defaultReserve);
            }
            if (maxWait.isNegative()) {
                throw new IllegalArgumentException("max-wait must not be negative, was " + maxWait);
            }
            if (retryAfter.isNegative() || retryAfter.isZero()) {
                throw new IllegalArgumentException("retry-after must be positive, was " + retryAfter);
            }
        }

        /**
         * Returns the defaults: a limit from 4 to 1000 starting at 20, a tenth of it reserved for critical requests
         * and a fifth more for default ones, a wait of at most 50 ms, and {@code Retry-After: 1}.
         */
        public static Settings defaults() {
            return new Settings(4, 20, 1000, 0.1, 0.2, Duration.ofMillis(50), Duration.ofSeconds(1));
        }
    }

    /** The room an admitted request holds until its response ends; given back by the {@link RequestLimiter}. */
    public static final class Slot {

        private final OverloadGuard.Slot slot;
        private final Priority priority;
        private volatile int status;

        private Slot(OverloadGuard.Slot slot, Priority priority) {
            this.slot = slot;
            this.priority = priority;
        }

        /** Returns the priority the request was admitted with. */
        public Priority priority() {
            return priority;
        }

        /** Returns how long the request waited for room, zero if it found room at once. */
        public Duration waited() {
            return Duration.ofNanos(slot.waitedNanos());
        }

        void begin() {
            slot.begin(System.nanoTime());
        }

        /** Notes the status the client was answered with, to learn from when the slot is given back. */
        void answered(int status) {
            this.status = status;
        }

        /** Gives the room back, learning from the status noted, or from nothing if none was. Idempotent. */
        void end() {
            int answered = status;
            if (answered == 0 || answered == 499) {
                slot.abandon(System.nanoTime()); // no answer from the service to learn from
            } else {
                slot.leave(System.nanoTime(), isFailure(answered));
            }
        }

        /** Gives the room back without learning anything: the request never reached the service. Idempotent. */
        void abandon() {
            slot.abandon(System.nanoTime());
        }
    }

    /** Returns the settings. */
    public Settings settings() {
        return settings;
    }

    /** Returns the learnt limit on requests in flight now. */
    public int limit() {
        return guard.limit();
    }

    /** Returns how many admitted requests are in flight now. */
    public int inFlight() {
        return guard.inFlight();
    }

    /** Returns how many requests wait for room now. */
    public int waiting() {
        return guard.waiting();
    }

    /**
     * Admits a request of {@code priority}, or refuses it. The stage completes at once when there is room or the
     * request is refused outright, and otherwise when room frees or the wait runs out, on Tollgate's expiry thread:
     * with the request's slot, or null if refused.
     *
     * @throws NullPointerException if priority is null
     */
    public CompletableFuture<Slot> enter(Priority priority) {
        Objects.requireNonNull(priority, "priority");
        CompletableFuture<OverloadGuard.Slot> admission = guard.enter(priority, System.nanoTime());
        if (admission.isDone()) {
            OverloadGuard.Slot slot = admission.join();
            return CompletableFuture.completedFuture(slot == null ? null : new Slot(slot, priority));
        }
        EXPIRY.schedule(() -> guard.expire(System.nanoTime()), guard.maxWaitNanos(), TimeUnit.NANOSECONDS);
        // Admitted or refused later, by the thread that freed room or the expiry thread: what follows (the rules'
        // buckets, and for one they refuse, the room given back to the next waiting) goes on on the expiry thread,
        // so that a queue of requests whose buckets refuse them is not worked through on one stack
        return admission.thenApplyAsync(slot -> slot == null ? null : new Slot(slot, priority), EXPIRY);
    }

    /** Returns whether {@code status} is how an overloaded service, or a proxy in front of one, fails. */
    static boolean isFailure(int status) {
        return status == 500 || status == 502 || status == 503 || status == 504;
    }

    private static ScheduledThreadPoolExecutor expiry() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "tollgate-overload-expiry");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    @Override
    public String toString() {
        return "OverloadProtection[limit=" + limit() + ", inFlight=" + inFlight() + ", waiting=" + waiting() + ", "
                + settings + "]";
    }
}
