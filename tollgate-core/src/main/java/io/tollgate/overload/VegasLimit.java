package io.tollgate.overload;

/**
 * A limit on requests in flight learnt from their latency, after TCP Vegas (Brakmo and Peterson, 1995) as
 * Netflix's concurrency-limits applies it to a service: the least latency seen is the service's time without a
 * queue; with {@code limit} requests in flight and a latency of {@code rtt}, about {@code limit x (1 - noLoad /
 * rtt)} of them are queued. Few queued (at most {@code alpha}): the service has room, and the limit grows; many
 * (at least {@code beta}): it is queueing, and the limit shrinks; between, it holds. {@code alpha} and {@code beta}
 * grow with the logarithm of the limit (3 and 6 times it), and so does each step, so that a large limit moves by a
 * few requests, not by one.
 *
 * <p>As TCP Vegas does, the limit moves once per round trip, not per request: from the least latency among as
 * many requests as the limit (a service's own spread of latencies, a long tail with no queue at all, would
 * otherwise read as queueing, and hold the limit below what the service can take). The limit grows only while
 * the load used at least half of it in that round trip, so that an idle service does not earn a limit it never
 * tried. A failure (a 5xx, a timeout, a refused connection) is a drop, which cuts the limit by a tenth at once,
 * as loss does a TCP window.
 *
 * <p>The time without a queue cannot be seen while the load keeps a queue, and a service whose own time grew for
 * good would otherwise be taken as queueing forever. So after {@value #PROBE_AFTER_QUEUEING_WINDOWS} round trips
 * in a row found a queue, and at least every {@link #PROBE_INTERVAL_NANOS} (after {@value #PROBE_SAMPLES_PER_UNIT}
 * samples per unit of the limit), the limit is lowered to its least for a few requests that enter at it, as
 * Envoy's adaptive concurrency filter does, and the least latency is learnt again from them; then the limit is
 * what it was. A probe holds back what the least limit leaves no room for, which is why it is not more frequent.
 * Not thread-safe: {@link OverloadGuard} holds a lock.
 */
final class VegasLimit {

    /** What a drop leaves of the limit. */
    static final double BACKOFF = 0.9;

    /** After how many samples, per unit of the limit, the least latency is learnt again at the soonest. */
    static final int PROBE_SAMPLES_PER_UNIT = 30;

    /** How long after the last probe the least latency is learnt again, at the latest while requests come. */
    static final long PROBE_INTERVAL_NANOS = 60_000_000_000L;

    /** After how many round trips in a row that found a queue the least latency is learnt again. */
    static final int PROBE_AFTER_QUEUEING_WINDOWS = 10;

    /** How many requests entered at the least limit the least latency is learnt from. */
    static final int PROBE_SAMPLES = 10;

    /** How many times {@link #PROBE_SAMPLES} samples in all a probe waits for them at most. */
    static final int PROBE_PATIENCE = 10;

    private final int min;
    private final int max;
    private double limit;
    private long noLoadNanos = Long.MAX_VALUE;
    private long samplesSinceProbe;
    private int queueingWindows;
    private long lastProbeNanos;
    /** While the least latency is learnt again: the samples still wanted, and the least of those taken. */
    private int probeLeft;

    private long probeLeast;
    private int probeSeen;

    /** The samples of the round trip being gathered: how many, their least latency, the most in flight. */
    private int windowSeen;

    private long windowLeast = Long.MAX_VALUE;
    private int windowMostInFlight;

    /**
     * @throws IllegalArgumentException unless {@code 1 <= min <= initial <= max}, naming the values
     */
    VegasLimit(int min, int initial, int max) {
        if (min < 1 || initial < min || max < initial) {
            throw new IllegalArgumentException("the limits must be 1 <= min <= initial <= max, were min " + min
                    + ", initial " + initial + ", max " + max);
        }
        this.min = min;
        this.max = max;
        this.limit = initial;
    }

    /** Returns the limit now, a whole number of requests in flight: its least while the no-load time is learnt. */
    int limit() {
        return probeLeft > 0 ? min : (int) limit;
    }

    /**
     * Learns from one request that ended.
     *
     * @param rttNanos how long it took, from entering to leaving
     * @param inFlight how many requests were in flight when it entered, itself included
     * @param dropped whether it failed as an overloaded service fails (a 5xx, a timeout, a refused connection)
     * @param nowNanos when it ended, of {@link System#nanoTime()} or the clock the caller keeps
     */
    void sample(long rttNanos, int inFlight, boolean dropped, long nowNanos) {
        if (dropped) {
            limit = Math.max(min, limit * BACKOFF);
            resetWindow();
            return;
        }
        if (rttNanos <= 0) {
            return;
        }
        if (probeLeft > 0) {
            if (inFlight <= min) { // entered at the least limit: no queue of this instance's making
                probeLeast = Math.min(probeLeast, rttNanos);
                probeLeft--;
            }
            // Requests that entered before the probe still end during it; it ends after so many samples in all,
            // keeping the least latency it knew if none entered at the least limit
            if (probeLeft == 0 || ++probeSeen >= PROBE_SAMPLES * PROBE_PATIENCE) {
                probeLeft = 0;
                if (probeLeast != Long.MAX_VALUE) {
                    noLoadNanos = probeLeast;
                }
            }
            return;
        }
        if (noLoadNanos == Long.MAX_VALUE) {
            lastProbeNanos = nowNanos; // the first sample: the periodic probe counts from here
        }
        if (queueingWindows >= PROBE_AFTER_QUEUEING_WINDOWS
                || (++samplesSinceProbe > PROBE_SAMPLES_PER_UNIT * Math.max(1, (long) limit)
                        && nowNanos - lastProbeNanos >= PROBE_INTERVAL_NANOS)) {
            samplesSinceProbe = 0;
            queueingWindows = 0;
            lastProbeNanos = nowNanos;
            probeLeft = PROBE_SAMPLES;
            probeSeen = 0;
            probeLeast = Long.MAX_VALUE;
            resetWindow();
            return;
        }
        noLoadNanos = Math.min(noLoadNanos, rttNanos);
        windowLeast = Math.min(windowLeast, rttNanos);
        windowMostInFlight = Math.max(windowMostInFlight, inFlight);
        if (++windowSeen < Math.max(1, (int) limit)) {
            return;
        }
        double log = Math.max(1, Math.log10(limit));
        double queued = limit * (1 - (double) noLoadNanos / windowLeast);
        if (queued <= 3 * log) {
            if (windowMostInFlight * 2 >= limit) {
                limit = Math.min(max, limit + log);
            }
            queueingWindows = 0;
        } else if (queued >= 6 * log) {
            limit = Math.max(min, limit - log);
            queueingWindows++;
        } else {
            queueingWindows = 0;
        }
        resetWindow();
    }

    private void resetWindow() {
        windowSeen = 0;
        windowLeast = Long.MAX_VALUE;
        windowMostInFlight = 0;
    }
}
