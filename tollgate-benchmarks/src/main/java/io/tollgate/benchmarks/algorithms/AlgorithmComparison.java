package io.tollgate.benchmarks.algorithms;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Replays three traffic patterns (steady, bursty, and the edge attack: the whole quota just before and just
 * after a window's edge) through a fixed window, a sliding window counter and Tollgate's token bucket, all
 * at 10 requests per 10 s, prints what each admitted as a Markdown table, and draws it as an SVG.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar
 * io.tollgate.benchmarks.algorithms.AlgorithmComparison [docs/algorithms.svg]}. Deterministic: no clock,
 * no randomness.
 */
public final class AlgorithmComparison {

    /** The limit every algorithm keeps: this many requests per window, the bucket's capacity. */
    static final long LIMIT = 10;

    static final long WINDOW_MICROS = 10_000_000;
    static final long HORIZON_MICROS = 30_000_000;

    private AlgorithmComparison() {}

    public static void main(String[] args) throws IOException {
        Path svg = Path.of(args.length > 0 ? args[0] : "docs/algorithms.svg");
        List<List<Replay>> rows = replays();
        System.out.print(table(rows));
        Files.writeString(svg, ComparisonChart.svg(rows, LIMIT, WINDOW_MICROS, HORIZON_MICROS));
        System.out.println();
        System.out.println("drawn to " + svg);
    }

    /** The traffic patterns, in the chart's order. */
    static List<Traffic> patterns() {
        return List.of(
                Traffic.steady(HORIZON_MICROS / 1_000_000),
                Traffic.bursty(HORIZON_MICROS / 1_000_000, 15),
                Traffic.boundaryAttack(LIMIT, 2 * WINDOW_MICROS));
    }

    /** Every pattern through every algorithm: a row per algorithm, each a fresh one per pattern. */
    static List<List<Replay>> replays() {
        List<Supplier<Admission>> algorithms = List.of(
                () -> new FixedWindow(LIMIT, WINDOW_MICROS),
                () -> new SlidingWindowCounter(LIMIT, WINDOW_MICROS),
                () -> new TokenBucketAdmission(LIMIT, Duration.ofNanos(WINDOW_MICROS * 1_000)));
        List<List<Replay>> rows = new ArrayList<>();
        for (Supplier<Admission> algorithm : algorithms) {
            List<Replay> row = new ArrayList<>();
            for (Traffic traffic : patterns()) {
                row.add(Replay.of(traffic, algorithm.get()));
            }
            rows.add(row);
        }
        return rows;
    }

    /** The numbers behind the chart, as docs/algorithms.md shows them. */
    static String table(List<List<Replay>> rows) {
        StringBuilder table = new StringBuilder();
        table.append("| traffic | algorithm | offered | admitted | most in any 10 s | most in any 1 s |\n");
        table.append("| --- | --- | --- | --- | --- | --- |\n");
        for (int column = 0; column < rows.get(0).size(); column++) {
            for (List<Replay> row : rows) {
                Replay replay = row.get(column);
                table.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %d | %d | %d | %d |%n",
                        replay.traffic().name(),
                        replay.algorithm(),
                        replay.traffic().offered().size(),
                        replay.admitted().size(),
                        replay.mostInAnyInterval(WINDOW_MICROS),
                        replay.mostInAnyInterval(1_000_000)));
            }
        }
        return table.toString();
    }
}
