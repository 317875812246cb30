package io.tollgate.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.tollgate.TimeSource;
import java.lang.System.Logger.Level;
import java.util.regex.Pattern;

/**
 * What the log says about connecting to Redis: the first failed attempt at WARNING, with Redis's own
 * answer when it gave one ({@code WRONGPASS}, {@code NOAUTH}); then at most one line a minute with how many
 * attempts failed since; and one line when it connects after all, saying after how many. Keeps the latest
 * reason, for the detail of decisions made meanwhile. Thread-safe.
 */
final class ConnectionLog {

    /** The system call that Netty's native transports name before the system's message. */
    private static final Pattern NATIVE_CALL =
            Pattern.compile("^\\w+\\(\\.\\.\\) failed(?: with error\\(-?\\d+\\))?: ");

    /** The shortest time between two lines about failed attempts: a minute. */
    static final long SUMMARY_MICROS = 60_000_000;

    private static final System.Logger LOG = System.getLogger(RedisRateLimiter.class.getName());

    private final String target;
    private final TimeSource time;
    private long failures;
    private long failuresSinceLine;
    private long lastLineMicros;
    private volatile String reason;

    ConnectionLog(String target, TimeSource time) {
        this.target = target;
        this.time = time;
    }

    /** Notes a failed attempt to connect. */
    synchronized void failed(Throwable failure) {
        reason = describe(failure);
        failures++;
        failuresSinceLine++;
        long now = time.nowMicros();
        if (failures == 1) {
            LOG.log(
                    Level.WARNING,
                    "Tollgate cannot connect to Redis at {0}: {1}; deciding by the failure policy, and trying again"
                            + " every second",
                    target,
                    reason);
        } else if (now - lastLineMicros >= SUMMARY_MICROS) {
            LOG.log(
                    Level.WARNING,
                    "Tollgate still cannot connect to Redis at {0}: {1} attempts failed in the last {2} s; the latest:"
                            + " {3}",
                    target,
                    failuresSinceLine,
                    (now - lastLineMicros + 999_999) / 1_000_000,
                    reason);
        } else {
            return;
        }
        failuresSinceLine = 0;
        lastLineMicros = now;
    }

    /**
     * Notes that the limiter connected; says so if attempts failed before (a first attempt that succeeds is
     * told by the limiter's line at startup).
     */
    synchronized void connected() {
        if (failures > 0) {
            LOG.log(
                    Level.INFO,
                    "Tollgate connected to Redis at {0} after {1} failed attempt{2}",
                    target,
                    failures,
                    failures == 1 ? "" : "s");
        }
        failures = 0;
        failuresSinceLine = 0;
        reason = null;
    }

    /** Returns why the latest attempt failed, or null if none has or it has connected since. */
    String reason() {
        return reason;
    }

    /**
     * Returns what a failure to connect says: Redis's own answer if it gave one (a wrong password is {@code
     * WRONGPASS ...}, where Lettuce's message says only that it was unable to connect), else the deepest
     * cause's message, without the system call that Netty's native transports name before it ({@code
     * finishConnect(..) failed with error(-111): Connection refused} says what NIO's {@code Connection
     * refused} says).
     */
    static String describe(Throwable failure) {
        String deepest = null;
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof RedisCommandExecutionException answered) {
                return "Redis answered " + answered.getMessage();
            }
            if (cause.getMessage() != null) {
                deepest = cause.getMessage();
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return deepest != null
                ? NATIVE_CALL.matcher(deepest).replaceFirst("")
                : failure.getClass().getSimpleName();
    }
}
