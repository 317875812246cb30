package io.tollgate.guard;

import io.tollgate.Degradation;
import io.tollgate.Policy;
import io.tollgate.TimeSource;
import io.tollgate.WarmUpKeys;
import java.lang.System.Logger.Level;
import java.lang.ref.WeakReference;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Says in the log, at WARNING, that decisions were degraded, without flooding it: the first degraded decision
 * of a policy and cause is logged at once, and then at most one line per policy and cause every {@link
 * #INTERVAL_MICROS}, with how many there were since the line before. Likewise for admissions by the failure
 * policy that the store's late answer showed to be over the limit. What was held back is logged by {@link
 * #flush}, which the guard calls every second, once its interval has passed: so every one is counted in a line,
 * even when the outage ends, or the requests stop, before another comes. The metrics count every one of them.
 *
 * <p>Thread-safe.
 */
final class DegradationLog {

    /** The shortest time between two lines about one policy and cause: ten seconds. */
    static final long INTERVAL_MICROS = 10_000_000;

    private static final int MAX_TRACKED = 1_024;
    private static final String OVER_LIMIT = "over-limit";
    private static final String UNREMEMBERED = "unremembered";

    private record Topic(String policy, String cause) {}

    /** What happened about one topic since its last line. */
    private static final class Tally {
        private boolean logged;
        private long lastLineMicros;
        private long count;
        /** What an event is, in the line: a decision, a request. */
        private String what;
        /** The line of the latest event, given how many there were as words. */
        private Function<String, String> line;
    }

    /** One thread for every limiter's flushes: a line is a rare thing. */
    private static final ScheduledExecutorService FLUSHES = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "tollgate-degradation-log");
        thread.setDaemon(true);
        return thread;
    });

    private final TimeSource time;
    private final System.Logger log;
    private final String store;
    private final Map<Topic, Tally> tallies = new ConcurrentHashMap<>();

    /**
     * @param log where the lines go: the logger of the limiter the application built, which it knows
     * @param store the store's name in the lines, such as {@code Redis}
     */
    DegradationLog(TimeSource time, System.Logger log, String store) {
        this.time = time;
        this.log = log;
        this.store = store;
    }

    /**
     * Notes a decision that the failure policy made because the store could not, as {@code degradation} says;
     * those of a warm-up (on a {@linkplain WarmUpKeys warm-up key}), cold by design, are not logged.
     */
    void degraded(Policy policy, String key, Degradation degradation) {
        if (WarmUpKeys.isWarmUp(key)) {
            return;
        }
        String cause = degradation.cause().name().toLowerCase(Locale.ROOT).replace('_', '-');
        count(
                new Topic(policy.name(), cause),
                "decision",
                counted -> "Tollgate: policy '" + policy.name() + "': " + counted + " degraded (" + cause
                        + "), decided by the failure policy " + degradation.fallback() + "; the latest: "
                        + degradation.detail());
    }

    /**
     * Notes a request that the failure policy admitted after its budget ran out, and that the store, answering
     * late, refused: it is charged to the store all the same, and was one request over the limit.
     */
    void overLimit(Policy policy, String key) {
        admitted(
                policy,
                OVER_LIMIT,
                "while " + store + " was late, and over the limit by its late answer; charged to " + store,
                key);
    }

    /**
     * Notes a request that the failure policy admitted while the store could not be asked, and that could not
     * be remembered to be charged to the store later, for want of room.
     */
    void unremembered(Policy policy, String key) {
        admitted(
                policy,
                UNREMEMBERED,
                "while " + store + " could not be asked, and not remembered to be charged to " + store
                        + " later: too many keys wait already",
                key);
    }

    /** Logs, counted as {@link #count} says, requests of {@code topic} that the failure policy admitted. */
    private void admitted(Policy policy, String topic, String how, String key) {
        if (WarmUpKeys.isWarmUp(key)) {
            return; // the warm-up's, cold by design
        }
        count(
                new Topic(policy.name(), topic),
                "request",
                counted -> "Tollgate: policy '" + policy.name() + "': " + counted + " admitted by the failure policy "
                        + how + " (the latest for key '" + key + "')");
    }

    /**
     * Counts one event of {@code topic}, {@code what} it is, and logs {@code line} (given the count as words) if a
     * line is due now; else holds it back for the next line, or {@link #flush}.
     */
    private void count(Topic topic, String what, Function<String, String> line) {
        Tally tally = tallies.get(topic);
        if (tally == null) {
            if (tallies.size() >= MAX_TRACKED) {
                tallies.clear(); // policies made on the fly: keep this bounded
            }
            tally = tallies.computeIfAbsent(topic, t -> new Tally());
        }
        String due;
        synchronized (tally) {
            long now = time.nowMicros();
            tally.count++;
            tally.what = what;
            tally.line = line;
            if (!tally.logged) { // the first of its topic: at once
                tally.count = 0;
                tally.logged = true;
                tally.lastLineMicros = now;
                due = line.apply("1 " + what);
            } else {
                due = due(tally, now, false);
            }
        }
        if (due != null) {
            log.log(Level.WARNING, due);
        }
    }

    /**
     * Flushes {@code log} every second until the returned task is cancelled, or the log is no longer used: the task
     * holds it weakly, so that a limiter dropped without being closed is not kept alive by it.
     */
    static ScheduledFuture<?> flushEverySecond(DegradationLog log) {
        WeakReference<DegradationLog> held = new WeakReference<>(log);
        ScheduledFuture<?>[] task = new ScheduledFuture<?>[1];
        synchronized (task) {
            task[0] = FLUSHES.scheduleWithFixedDelay(
                    () -> {
                        DegradationLog alive = held.get();
                        if (alive != null) {
                            alive.flush();
                        } else {
                            synchronized (task) {
                                task[0].cancel(false);
                            }
                        }
                    },
                    1,
                    1,
                    TimeUnit.SECONDS);
            return task[0];
        }
    }

    /**
     * Logs what was held back of each topic whose interval has passed since its last line, so that every event is
     * counted in a line even if no other comes after it. Cheap when nothing waits; thread-safe.
     */
    void flush() {
        flush(false);
    }

    /** Logs everything held back, interval or not: the limiter is closing. */
    void flushAll() {
        flush(true);
    }

    private void flush(boolean all) {
        long now = time.nowMicros();
        for (Map.Entry<Topic, Tally> each : tallies.entrySet()) {
            Tally tally = each.getValue();
            String due;
            synchronized (tally) {
                due = tally.count == 0 ? null : due(tally, now, all);
            }
            if (due != null) {
                log.log(Level.WARNING, due);
            }
        }
    }

    /**
     * Returns the line of the events counted since the topic's last line, if its interval has passed, and starts
     * counting again; else null. Called under the tally's lock.
     */
    private static String due(Tally tally, long now, boolean evenWithinInterval) {
        long since = now - tally.lastLineMicros;
        if (since < INTERVAL_MICROS && !evenWithinInterval) {
            return null;
        }
        long count = tally.count;
        tally.count = 0;
        tally.lastLineMicros = now;
        return tally.line.apply(count + " " + tally.what + (count == 1 ? "" : "s") + " in the last "
                + (since + 999_999) / 1_000_000 + " s");
    }
}
