package io.tollgate.redis;

import io.tollgate.TimeSource;
import java.lang.System.Logger.Level;

/**
 * What the log says while Redis refuses writes for want of memory ({@code maxmemory} reached under the {@code
 * noeviction} policy, which answers every script that may write with {@code OOM command not allowed}): one line
 * when the first decision is refused, saying what decides meanwhile and what to change, and one when Redis has
 * written every decision for a quiet period, with how long the refusals lasted and how many there were. At the
 * edge of {@code maxmemory} Redis refuses some writes and takes others as expiring keys free memory: that is one
 * episode, not a line per refusal. Each refusal is also counted with the other error replies ({@code
 * tollgate_redis_failures_total{cause="error_reply"}}), and the failure policy decides it.
 *
 * <p>Thread-safe.
 */
final class OutOfMemoryLog {

    private static final System.Logger LOG = System.getLogger(RedisRateLimiter.class.getName());

    /** How long Redis writes every decision before the log says it has room again. */
    static final long QUIET_MICROS = 10_000_000;

    private final String target; // "Redis at HOST:PORT (TLS)", as the connector says where it is
    private final TimeSource time;
    private final long quietMicros;
    /** Whether an episode is open: read on every reply while it is, and only then. */
    private volatile boolean refusing;
    /** When the last refusal came: a reply within the quiet period after it does not end the episode. */
    private volatile long lastRefusalMicros;

    private long refused;
    private long sinceMicros;

    OutOfMemoryLog(String target, TimeSource time) {
        this(target, time, QUIET_MICROS);
    }

    OutOfMemoryLog(String target, TimeSource time, long quietMicros) {
        this.target = target;
        this.time = time;
        this.quietMicros = quietMicros;
    }

    /** Whether {@code message}, Redis's answer, is its refusal of a write for want of memory. */
    static boolean isOutOfMemory(String message) {
        return message != null && message.contains("OOM command not allowed");
    }

    /** Notes a decision Redis refused for want of memory. */
    synchronized void refused() {
        long now = time.nowMicros();
        refused++;
        lastRefusalMicros = now;
        if (refusing) {
            return;
        }
        refusing = true;
        sinceMicros = now;
        LOG.log(
                Level.WARNING,
                "{0} refuses writes: it is out of memory (maxmemory reached, and its policy evicts nothing);"
                        + " the failure policy decides until it has room. Give it more memory, or a policy that"
                        + " evicts keys with an expiry (volatile-ttl): every Tollgate bucket has one; see"
                        + " docs/redis.md#sizing-redis",
                target);
    }

    /** Whether an episode of refusals is open: only then is {@link #answered} worth calling. */
    boolean refusing() {
        return refusing;
    }

    /** Notes a decision Redis made and wrote. */
    void answered() {
        if (!refusing || time.nowMicros() - lastRefusalMicros < quietMicros) {
            return;
        }
        synchronized (this) {
            if (!refusing || time.nowMicros() - lastRefusalMicros < quietMicros) {
                return;
            }
            refusing = false;
            LOG.log(
                    Level.INFO,
                    "{0} takes writes again: none refused for {1} s; it refused {2} decisions for want of memory"
                            + " over {3} s, which the failure policy made",
                    target,
                    quietMicros / 1_000_000,
                    refused,
                    (lastRefusalMicros - sinceMicros + 999_999) / 1_000_000);
            refused = 0;
        }
    }
}
