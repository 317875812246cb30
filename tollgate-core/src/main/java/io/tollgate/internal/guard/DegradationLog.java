package io.tollgate.internal.guard;

import io.tollgate.Degradation;
import io.tollgate.Policy;
import io.tollgate.RateLimiter;
import io.tollgate.TimeSource;
import java.lang.System.Logger.Level;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Says in the log, at WARNING, that decisions were degraded, without flooding it: the first degraded decision
 * of a policy and cause is logged at once, and then at most one line per policy and cause every {@link
 * #INTERVAL_MICROS}, with how many there were since the line before. Likewise for admissions by the failure
 * policy that the store's late answer showed to be over the limit. The metrics count every one of them.
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
    }

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
     * those of a warm-up ({@link RateLimiter#warmUp}), cold by design, are not logged.
     */
    void degraded(Policy policy, Degradation degradation) {
        if (policy.name().startsWith(RateLimiter.WARM_UP_POLICY_PREFIX)) {
            return;
        }
        String cause = degradation.cause().name().toLowerCase(Locale.ROOT).replace('_', '-');
        String counted = count(new Topic(policy.name(), cause), "decision");
        if (counted != null) {
            log.log(
                    Level.WARNING,
                    "Tollgate: policy '" + policy.name() + "': " + counted + " degraded (" + cause
                            + "), decided by the failure policy " + degradation.fallback() + "; the latest: "
                            + degradation.detail());
        }
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
        String counted = count(new Topic(policy.name(), topic), "request");
        if (counted != null) {
            log.log(
                    Level.WARNING,
                    "Tollgate: policy '" + policy.name() + "': " + counted + " admitted by the failure policy " + how
                            + " (the latest for key '" + key + "')");
        }
    }

    /**
     * Counts one event of {@code topic}; returns how many there were since the last line, as words, if a
     * line is due now, else null.
     */
    private String count(Topic topic, String what) {
        Tally tally = tallies.get(topic);
        if (tally == null) {
            if (tallies.size() >= MAX_TRACKED) {
                tallies.clear(); // policies made on the fly: keep this bounded
            }
            tally = tallies.computeIfAbsent(topic, t -> new Tally());
        }
        long now = time.nowMicros();
        synchronized (tally) {
            tally.count++;
            boolean first = !tally.logged;
            long since = now - tally.lastLineMicros;
            if (!first && since < INTERVAL_MICROS) {
                return null;
            }
            long count = tally.count;
            tally.count = 0;
            tally.logged = true;
            tally.lastLineMicros = now;
            return first
                    ? "1 " + what
                    : count + " " + what + (count == 1 ? "" : "s") + " in the last " + (since + 999_999) / 1_000_000
                            + " s";
        }
    }
}
