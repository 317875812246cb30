package io.tollgate.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The plots of {@link BatchingLoadHarness} for docs/benchmarks.md: decisions per second against requests in flight
 * beside what Redis does alone (redis-benchmark's script calls and writes), and latency percentiles.
 */
final class BatchingCharts {

    /** The legend's names of the ceilings, one colour in both panels. */
    static final String SCRIPT_CEILING = "Redis alone: EVALSHA of the script";

    static final String SET_CEILING = "Redis alone: SET";

    private BatchingCharts() {}

    /** Where the latency plot goes beside the throughput plot {@code plot}: {@code name-latency.svg}. */
    static Path latencyPath(Path plot) {
        String name = plot.getFileName().toString();
        String base = name.endsWith(".svg") ? name.substring(0, name.length() - 4) : name;
        return plot.resolveSibling(base + "-latency.svg");
    }

    /**
     * Two panels, one hot key and 10 000 keys: each limiter's decisions per second, and as dashed lines the
     * requests per second of redis-benchmark's calls of the limiter's script and of a plain {@code SET} on the same
     * keys (one call per request, 16 pipelined on 50 connections), from {@link RedisLoadHarness#ceiling}.
     */
    static String throughput(Map<String, RedisLoadHarness.Result[][]> results, Map<String, Double> ceilings, int[] x) {
        List<LineChart.Panel> panels = new ArrayList<>();
        for (int k = 0; k < BatchingLoadHarness.KEYS.length; k++) {
            boolean hot = BatchingLoadHarness.KEYS[k] == 1;
            List<LineChart.Series> series = new ArrayList<>();
            for (Map.Entry<String, RedisLoadHarness.Result[][]> subject : results.entrySet()) {
                double[] values = new double[x.length];
                for (int f = 0; f < x.length; f++) {
                    values[f] = subject.getValue()[k][f].perSecond();
                }
                series.add(new LineChart.Series(
                        subject.getKey(), values, subject.getKey().startsWith("no limiter")));
            }
            series.add(flat(
                    SCRIPT_CEILING,
                    ceilings.get("EVALSHA token_bucket.lua, " + (hot ? "one hot key" : "10 000 keys")),
                    x.length));
            series.add(flat(SET_CEILING, ceilings.get(hot ? "SET k v" : "SET k:__rand_int__ v PX 3600000"), x.length));
            panels.add(new LineChart.Panel(hot ? "one hot key" : "10 000 keys", series));
        }
        return LineChart.svg("decisions per second", false, "requests in flight", x, panels);
    }

    /** Two panels, the median and the 99th percentile of each limiter's latency on 10 000 keys, in ms. */
    static String latency(Map<String, RedisLoadHarness.Result[][]> results, int[] x) {
        int k = BatchingLoadHarness.KEYS.length - 1; // 10 000 keys
        List<LineChart.Panel> panels = new ArrayList<>();
        for (double percentile : new double[] {50, 99}) {
            List<LineChart.Series> series = new ArrayList<>();
            for (Map.Entry<String, RedisLoadHarness.Result[][]> subject : results.entrySet()) {
                if (subject.getKey().startsWith("no limiter")) {
                    continue; // it answers at once: no latency to speak of
                }
                double[] values = new double[x.length];
                for (int f = 0; f < x.length; f++) {
                    values[f] = subject.getValue()[k][f].micros().getValueAtPercentile(percentile) / 1_000.0;
                }
                series.add(new LineChart.Series(subject.getKey(), values, false));
            }
            panels.add(
                    new LineChart.Panel((percentile == 50 ? "median" : "99th percentile") + ", 10 000 keys", series));
        }
        return LineChart.svg("latency of a decision", true, "requests in flight", x, panels);
    }

    private static LineChart.Series flat(String name, Double value, int points) {
        double[] values = new double[points];
        Arrays.fill(values, value == null ? Double.NaN : value);
        return new LineChart.Series(name, values, true);
    }
}
