package io.tollgate.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.tollgate.RateLimiter;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * What the management page charts, kept on the server so that the page shows the last 15 minutes as soon as it
 * opens: the limiter's decisions per policy ({@code tollgate.decisions}: allowed, refused, and those the failure
 * policy made) and Redis's latency histogram ({@code tollgate.redis.latency}), sampled from the meters every
 * {@link #INTERVAL}. Memory is fixed: {@link #SAMPLES} samples of three counts for at most {@link #MAX_POLICIES}
 * policies (policies beyond are not charted; the meters still count them). Thread-safe.
 */
final class MeterHistory implements AutoCloseable {

    /** How often the meters are sampled: the page's resolution. */
    static final Duration INTERVAL = Duration.ofSeconds(2);

    /** Samples kept: 15 minutes of them, and one more to take the first difference from. */
    static final int SAMPLES = (int) (Duration.ofMinutes(15).toSeconds() / INTERVAL.toSeconds()) + 1;

    /** The most policies charted. */
    static final int MAX_POLICIES = 500;

    /** The window of the latency quantiles, in samples: a minute. */
    static final int LATENCY_SAMPLES = (int) (60 / INTERVAL.toSeconds());

    private static final int ALLOWED = 0;
    private static final int REFUSED = 1;
    private static final int DEGRADED = 2;
    private static final long[] NONE = new long[3];

    private final MeterRegistry registry;
    private final ScheduledExecutorService sampler;

    // All guarded by this. Ring buffers indexed by sample number modulo SAMPLES.
    private final long[] times = new long[SAMPLES];
    /** Per policy, per sample, the three running totals; -1 where the policy had no meter yet. */
    private final Map<String, long[][]> decisions = new HashMap<>();
    /** Per sample, the latency histogram's cumulative counts, or null before Redis answered once. */
    private final long[][] latency = new long[SAMPLES][];
    /** The latency histogram's bucket bounds in seconds, once known. */
    private double[] bounds;
    /** How many samples have been taken. */
    private long taken;

    private MeterHistory(MeterRegistry registry, boolean sampling) {
        this.registry = registry;
        if (sampling) {
            sampler = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "tollgate-meter-history");
                thread.setDaemon(true);
                return thread;
            });
            sampler.scheduleAtFixedRate(this::sample, 0, INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        } else {
            sampler = null;
        }
    }

    /** Starts sampling {@code registry} at once and every {@link #INTERVAL}, on a thread of its own. */
    static MeterHistory sampling(MeterRegistry registry) {
        return new MeterHistory(registry, true);
    }

    /** A history that samples only when {@link #sample} is called, for tests. */
    static MeterHistory manual(MeterRegistry registry) {
        return new MeterHistory(registry, false);
    }

    /** Takes one sample of the meters now. */
    void sample() {
        Map<String, long[]> totals = new HashMap<>();
        for (Counter counter : registry.find("tollgate.decisions").counters()) {
            String policy = counter.getId().getTag("policy");
            if (policy == null || policy.startsWith(RateLimiter.WARM_UP_POLICY_PREFIX)) {
                continue;
            }
            long[] total = totals.computeIfAbsent(policy, name -> new long[3]);
            long count = (long) counter.count();
            total["allowed".equals(counter.getId().getTag("outcome")) ? ALLOWED : REFUSED] += count;
            if ("fallback".equals(counter.getId().getTag("source"))) {
                total[DEGRADED] += count;
            }
        }
        Timer timer = registry.find("tollgate.redis.latency").timer();
        CountAtBucket[] buckets = timer == null ? null : timer.takeSnapshot().histogramCounts();
        synchronized (this) {
            int slot = (int) (taken % SAMPLES);
            times[slot] = System.currentTimeMillis();
            for (Map.Entry<String, long[]> total : totals.entrySet()) {
                long[][] series = decisions.get(total.getKey());
                if (series == null) {
                    if (decisions.size() >= MAX_POLICIES) {
                        continue;
                    }
                    series = new long[SAMPLES][];
                    decisions.put(total.getKey(), series);
                }
                series[slot] = total.getValue();
            }
            for (Map.Entry<String, long[][]> series : decisions.entrySet()) {
                if (!totals.containsKey(series.getKey())) {
                    series.getValue()[slot] = null; // its meters were removed: no sample
                }
            }
            if (buckets != null && buckets.length > 0) {
                if (bounds == null) {
                    bounds = new double[buckets.length + 1];
                    for (int i = 0; i < buckets.length; i++) {
                        bounds[i] = buckets[i].bucket(TimeUnit.SECONDS);
                    }
                    bounds[buckets.length] = Double.POSITIVE_INFINITY;
                }
                long[] counts = new long[buckets.length + 1];
                for (int i = 0; i < buckets.length; i++) {
                    counts[i] = (long) buckets[i].count();
                }
                counts[buckets.length] = timer.count(); // the last bucket, +Inf, holds every call
                latency[slot] = counts;
            } else {
                latency[slot] = null;
            }
            taken++;
        }
    }

    /**
     * The decisions per second of each policy over the samples kept, oldest first: for each interval between
     * two samples, allowed, refused and degraded (made by the failure policy, allowed or refused) decisions a
     * second; a policy's meters absent from a sample count from zero at the next (they were registered since).
     */
    record Rates(long endMillis, double intervalSeconds, Map<String, double[][]> policies) {}

    /** Returns the rates of every charted policy, policies sorted by name. */
    synchronized Rates rates() {
        int intervals = (int) Math.min(taken, SAMPLES) - 1;
        Map<String, double[][]> policies = new TreeMap<>();
        if (intervals <= 0) {
            return new Rates(System.currentTimeMillis(), INTERVAL.toSeconds(), policies);
        }
        long first = taken - intervals - 1;
        for (Map.Entry<String, long[][]> entry : decisions.entrySet()) {
            double[][] rates = new double[3][intervals];
            for (int i = 0; i < intervals; i++) {
                int from = (int) ((first + i) % SAMPLES);
                int to = (int) ((first + i + 1) % SAMPLES);
                long[] before = entry.getValue()[from];
                long[] after = entry.getValue()[to];
                if (after == null) {
                    continue;
                }
                if (before == null) {
                    before = NONE; // its meters were registered since: they started from zero
                }
                double seconds = Math.max(1, times[to] - times[from]) / 1000.0;
                for (int measure = 0; measure < 3; measure++) {
                    // a meter removed and registered again starts over: never a negative rate
                    rates[measure][i] = Math.max(0, after[measure] - before[measure]) / seconds;
                }
            }
            policies.put(entry.getKey(), rates);
        }
        return new Rates(times[(int) ((taken - 1) % SAMPLES)], INTERVAL.toSeconds(), policies);
    }

    /**
     * Redis's latency over the last minute (the calls answered between the oldest sample of the minute and the
     * newest): how many, and the quantiles interpolated within the histogram's buckets as Prometheus's {@code
     * histogram_quantile} does, in seconds; empty when no call was answered.
     *
     * @param calls the calls answered in the window
     * @param quantiles the 0.5, 0.99 and 0.999 quantiles, in seconds
     */
    record Latency(long calls, Map<String, Double> quantiles) {}

    /** Returns the latency of the last minute, or null where Redis never answered. */
    synchronized Latency latency() {
        if (taken == 0 || bounds == null) {
            return null;
        }
        int newest = (int) ((taken - 1) % SAMPLES);
        long back = Math.min(LATENCY_SAMPLES, taken - 1);
        long[] end = latency[newest];
        long[] start = null;
        for (long i = back; i > 0 && start == null; i--) {
            start = latency[(int) ((taken - 1 - i) % SAMPLES)];
        }
        if (end == null) {
            return null;
        }
        long[] counts = new long[end.length];
        for (int i = 0; i < end.length; i++) {
            counts[i] = end[i] - (start == null || start.length != end.length ? 0 : start[i]);
            if (counts[i] < 0) {
                counts = end.clone(); // the timer was removed and registered again since: it starts over
                break;
            }
        }
        long calls = counts[counts.length - 1];
        Map<String, Double> quantiles = new LinkedHashMap<>();
        if (calls > 0) {
            quantiles.put("p50", quantile(0.5, counts));
            quantiles.put("p99", quantile(0.99, counts));
            quantiles.put("p999", quantile(0.999, counts));
        }
        return new Latency(calls, quantiles);
    }

    /** The quantile {@code q} of cumulative bucket {@code counts}, interpolated linearly within its bucket. */
    private double quantile(double q, long[] counts) {
        double rank = q * counts[counts.length - 1];
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] >= rank) {
                double lower = i == 0 ? 0 : bounds[i - 1];
                long below = i == 0 ? 0 : counts[i - 1];
                long inBucket = counts[i] - below;
                if (Double.isInfinite(bounds[i])) {
                    return lower; // above the last finite bound: at least that, as histogram_quantile says
                }
                return inBucket == 0 ? bounds[i] : lower + (bounds[i] - lower) * (rank - below) / inBucket;
            }
        }
        return bounds[bounds.length - 2];
    }

    /** Returns each Redis node's circuit state ({@code closed}, {@code half_open} or {@code open}) by node. */
    Map<String, String> circuits() {
        Map<String, String> states = new TreeMap<>();
        for (Gauge gauge : registry.find("tollgate.circuit.state").gauges()) {
            if (gauge.value() == 1) {
                states.put(gauge.getId().getTag("node"), gauge.getId().getTag("state"));
            }
        }
        return states;
    }

    @Override
    public void close() {
        if (sampler != null) {
            sampler.shutdownNow();
        }
    }
}
