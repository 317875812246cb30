package io.tollgate.internal.overload;

/**
 * A limit on requests in flight learnt from their latency, after TCP Vegas (Brakmo and Peterson, 1995) as
 * Netflix's concurrency-limits applies it to a service: the least latency seen is the service's time without a
 * queue; with {@code limit} requests in flight and a latency of {@code rtt}, about {@code limit x (1 - noLoad /
 * rtt)} of them are queued. Few queued (at most {@code alpha}): the service has room, and the limit grows; many
 * (at least {@code beta}): it is queueing, and the limit shrinks; between, it holds. A failure (a 5xx, a timeout,
 * a refused connection) is a drop, which cuts the limit by a tenth at once, as loss does a TCP window. The limit
 * grows only while the load uses at least half of it, so that an idle service does not earn a limit it never
 * tried. {@code alpha} and {@code beta} grow with the logarithm of the limit (3 and 6 times it), and so does each
 * step, so that a large limit moves by a few requests, not by one.
 *
 * <p>The time without a queue cannot be seen while the load keeps a queue, and a service whose own time grew for
 * good would otherwise be taken as queueing forever. So every so many samples the limit is lowered to its least
 * for a few requests that enter at it, as Envoy's adaptive concurrency filter does, and the least latency is
 * learnt again from them; then the limit is what it was. Not thread-safe: {@link OverloadGuard} holds a lock.
 */
final class VegasLimit {

    /** What a drop leaves of the limit. */
    static final double BACKOFF = 0.9;

    /** After how many samples, per unit of the limit, the least latency is learnt again. */
    static final int PROBE_SAMPLES_PER_UNIT = 30;

    /** How many requests entered at the least limit the least latency is learnt from. */
    static final int PROBE_SAMPLES = 10;

    /** How many times {@link #PROBE_SAMPLES} samples in all a probe waits for them at most. */
    static final int PROBE_PATIENCE = 10;

    private final int min;
    private final int max;
    private double limit;
    private long noLoadNanos = Long.MAX_VALUE;
    private long samplesSinceProbe;
    /** While the least latency is learnt again: the samples still wanted, and the least of those taken. */
    private int probeLeft;

    private long probeLeast;
    private int probeSeen;

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
     */
    void sample(long rttNanos, int inFlight, boolean dropped) {
        if (dropped) {
            limit = Math.max(min, limit * BACKOFF);
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
        if (noLoadNanos == Long.MAX_VALUE || ++samplesSinceProbe > PROBE_SAMPLES_PER_UNIT * Math.max(1, (long) limit)) {
            samplesSinceProbe = 0;
            probeLeft = PROBE_SAMPLES;
            probeSeen = 0;
            probeLeast = Long.MAX_VALUE;
            if (noLoadNanos == Long.MAX_VALUE) {
                noLoadNanos = rttNanos; // until the probe learns better
            }
            return;
        }
        noLoadNanos = Math.min(noLoadNanos, rttNanos);
        double log = Math.max(1, Math.log10(limit));
        double queued = limit * (1 - (double) noLoadNanos / rttNanos);
        if (queued <= 3 * log) {
            if (inFlight * 2 >= limit) {
                limit = Math.min(max, limit + log);
            }
        } else if (queued >= 6 * log) {
            limit = Math.max(min, limit - log);
        }
    }
}
