package io.tollgate.server.internal.access;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * What callers of the decision API and of Envoy's rate limit service did, where an operator looks:
 *
 * <ul>
 *   <li>{@code tollgate.callers.requests} (counter), tags {@code caller} (its name, or {@value
 *       Callers#UNKNOWN} when a call named none), {@code api} ({@code check}, {@code charge} or {@code envoy})
 *       and {@code outcome}: {@code served}, {@code unauthenticated} (no caller's token or certificate: 401,
 *       {@code UNAUTHENTICATED}) or {@code forbidden} (a policy or key the caller may not ask of: 403, {@code
 *       PERMISSION_DENIED});
 *   <li>one log line per caller and reason of refusal, at most every {@value #LOG_INTERVAL_SECONDS} seconds,
 *       with how many calls it was refused meanwhile: a caller that keeps sending a revoked token shows up
 *       without filling the log. A presented token is never logged.
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class CallerEvents {

    /** The least time between two log lines of one caller and reason. */
    static final long LOG_INTERVAL_SECONDS = 10;

    private static final System.Logger LOG = System.getLogger("io.tollgate.server");

    private record Tags(String caller, String api, String outcome) {}

    /** Refusals of one caller and reason since its last log line, and when that line was written. */
    private static final class Refusals {
        final AtomicLong count = new AtomicLong();
        volatile long loggedNanos = Long.MIN_VALUE;
    }

    private final MeterRegistry registry;
    private final LongSupplier nanoTime;
    private final Map<Tags, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Refusals> refusals = new ConcurrentHashMap<>();

    /** Records into {@code registry}. */
    public CallerEvents(MeterRegistry registry) {
        this(registry, System::nanoTime);
    }

    CallerEvents(MeterRegistry registry, LongSupplier nanoTime) {
        this.registry = registry;
        this.nanoTime = nanoTime;
    }

    /** Counts a call of {@code caller} that was served (decided: allowed or refused by its bucket). */
    public void served(Callers.Caller caller, String api) {
        counter(caller.name(), api, "served").increment();
    }

    /** Counts and logs a call that named no caller, {@code detail} saying how, such as a wrong token. */
    public void unauthenticated(String api, String detail) {
        counter(Callers.UNKNOWN, api, "unauthenticated").increment();
        log(Callers.UNKNOWN, api, detail);
    }

    /** Counts and logs a call of {@code caller} for what it may not ask, {@code detail} saying what. */
    public void forbidden(Callers.Caller caller, String api, String detail) {
        counter(caller.name(), api, "forbidden").increment();
        log(caller.name(), api, detail);
    }

    private Counter counter(String caller, String api, String outcome) {
        return counters.computeIfAbsent(
                new Tags(caller, api, outcome),
                tags -> Counter.builder("tollgate.callers.requests")
                        .description("Calls of the decision API and Envoy's rate limit service by caller, api and"
                                + " outcome: served, unauthenticated (no caller's token) or forbidden (a policy or"
                                + " key the caller may not ask of)")
                        .tags("caller", tags.caller(), "api", tags.api(), "outcome", tags.outcome())
                        .register(registry));
    }

    private void log(String caller, String api, String detail) {
        // Bounded: details name no client input but a defined policy, so there are at most as many as callers,
        // policies and the two ways of naming no caller
        Refusals refused = refusals.computeIfAbsent(caller + "|" + api + "|" + detail, key -> new Refusals());
        refused.count.incrementAndGet();
        long now = nanoTime.getAsLong();
        long last = refused.loggedNanos;
        if (last != Long.MIN_VALUE && now - last < TimeUnit.SECONDS.toNanos(LOG_INTERVAL_SECONDS)) {
            return;
        }
        synchronized (refused) {
            if (refused.loggedNanos != last) {
                return; // another thread logged them
            }
            refused.loggedNanos = now;
            long since = refused.count.getAndSet(0);
            LOG.log(
                    Level.WARNING,
                    "tollgate: refused {0} {1} call{2} of caller {3}{4}: {5}",
                    since,
                    api,
                    since == 1 ? "" : "s",
                    caller.equals(Callers.UNKNOWN) ? "unknown" : "'" + caller + "'",
                    last == Long.MIN_VALUE ? "" : " in the last " + LOG_INTERVAL_SECONDS + " s",
                    detail);
        }
    }
}
