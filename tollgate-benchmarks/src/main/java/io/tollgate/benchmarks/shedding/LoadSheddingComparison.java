package io.tollgate.benchmarks.shedding;

import io.tollgate.Priority;
import io.tollgate.overload.OverloadGuard;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Replays a load ramping from half a service's capacity to three times it, through Tollgate's overload guard and
 * without it, prints what each run served as a Markdown table, and draws it as an SVG.
 *
 * <p>The service: {@value #WORKERS} workers, each request taking 15 ms plus an exponentially distributed extra of
 * mean 5 ms (so 20 ms on average, a capacity of 800 requests a second). The clients: a Poisson stream whose rate
 * rises from 0.5 to 3 times the capacity over the first {@value #RAMP_SECONDS} s and holds there until {@value
 * #DURATION_SECONDS} s; a fifth of the requests critical, two fifths default, two fifths sheddable; each client
 * gives up after {@value #TIMEOUT_MILLIS} ms. Four runs: without protection; behind Netflix's concurrency-limits (its
 * default {@code VegasLimit}), one limiter for all and then partitioned by priority ({@link #NETFLIX_SHARES}); and
 * behind Tollgate's overload guard with the shipped defaults.
 *
 * <p>Run: {@code java -cp tollgate-benchmarks/target/benchmarks.jar
 * io.tollgate.benchmarks.shedding.LoadSheddingComparison [docs/load-shedding.svg]}. Simulated time and seeded
 * randomness: the same figures on any machine, but for Netflix's, whose {@code VegasLimit} jitters its probe with
 * {@code ThreadLocalRandom} (its rows move by a percent or so between runs).
 */
public final class LoadSheddingComparison {

    static final int WORKERS = 16;
    static final long BASE_NANOS = 15_000_000;
    static final long EXTRA_MEAN_NANOS = 5_000_000;
    static final int RAMP_SECONDS = 60;
    static final int DURATION_SECONDS = 90;
    static final long TIMEOUT_MILLIS = 1000;
    static final long SEED = 34;
    /** The share of critical, default and sheddable requests. */
    static final double[] MIX = {0.2, 0.4, 0.4};

    /** The seconds the unloaded latency is read from: the first five, at 0.5 to 0.7 times the capacity. */
    static final int UNLOADED_TO = 5;

    /** The seconds the load is three times the capacity. */
    static final int HELD_FROM = RAMP_SECONDS;

    private LoadSheddingComparison() {}

    public static void main(String[] args) throws IOException {
        Path svg = Path.of(args.length > 0 ? args[0] : "docs/load-shedding.svg");
        List<SheddingReplay> replays = replays();
        System.out.print(table(replays));

        if (Boolean.getBoolean("shedding.seconds")) { // each second of each run, as the chart draws them
            for (SheddingReplay replay : replays) {
                for (int i = 0; i < replay.seconds().size(); i++) {
                    SheddingReplay.Second second = replay.seconds().get(i);
                    SheddingReplay.Summary one = replay.summary(i, i + 1);
                    System.out.printf(
                            Locale.ROOT,
                            "%s %d offered %.0f served %.0f limit %.1f p99 %d c %.3f d %.3f s %.3f%n",
                            replay.name()
                                    .substring(0, Math.min(12, replay.name().length())),
                            i,
                            second.offeredRate(),
                            one.goodputPerSecond(),
                            second.meanLimit(),
                            one.p99Nanos() / 1_000_000,
                            one.success()[0],
                            one.success()[1],
                            one.success()[2]);
                }
            }
        }
        Files.writeString(svg, SheddingChart.svg(replays, profile()));
        System.out.println();
        System.out.println("drawn to " + svg);
    }

    /** The shares of the limit Netflix's partitioned limiter guarantees to critical, default and sheddable. */
    static final double[] NETFLIX_SHARES = {0.5, 0.3, 0.2};

    /**
     * Without protection; behind Netflix's concurrency-limits, one limiter for all, then partitioned by priority; and
     * behind Tollgate's overload guard (the last).
     */
    static List<SheddingReplay> replays() {
        long timeout = TIMEOUT_MILLIS * 1_000_000;
        return List.of(
                SheddingReplay.run(
                        "without protection", profile(), LoadSheddingComparison::service, null, MIX, timeout, SEED),
                SheddingReplay.run(
                        "Netflix concurrency-limits, one limiter",
                        profile(),
                        LoadSheddingComparison::service,
                        NetflixGate.simple(),
                        MIX,
                        timeout,
                        SEED),
                SheddingReplay.run(
                        "Netflix concurrency-limits, partitioned",
                        profile(),
                        LoadSheddingComparison::service,
                        NetflixGate.partitioned(NETFLIX_SHARES),
                        MIX,
                        timeout,
                        SEED),
                SheddingReplay.run(
                        "Tollgate's overload guard",
                        profile(),
                        LoadSheddingComparison::service,
                        new GuardGate(guard()),
                        MIX,
                        timeout,
                        SEED));
    }

    static OverloadGuard guard() {
        return new OverloadGuard(4, 20, 1000, 0.1, 0.2, 50_000_000);
    }

    static LoadProfile profile() {
        return new LoadProfile(
                service().capacityPerSecond(),
                0.5,
                3,
                RAMP_SECONDS * 1_000_000_000L,
                DURATION_SECONDS * 1_000_000_000L);
    }

    private static SimulatedService service() {
        return new SimulatedService(WORKERS, BASE_NANOS, EXTRA_MEAN_NANOS, new Random(SEED + 1));
    }

    /** The numbers behind the chart, as docs/load-shedding.md shows them. */
    static String table(List<SheddingReplay> replays) {
        StringBuilder table = new StringBuilder();
        table.append("| run | p99, unloaded | goodput at 3x | p99 at 3x | critical served | default served |"
                + " sheddable served | shed at 3x | timed out at 3x |\n");
        table.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (SheddingReplay replay : replays) {
            table.append(row(replay));
        }
        return table.toString();
    }

    /** One run's row of the table. */
    static String row(SheddingReplay replay) {
        SheddingReplay.Summary unloaded = replay.summary(0, UNLOADED_TO);
        SheddingReplay.Summary held = replay.summary(HELD_FROM, DURATION_SECONDS);
        return String.format(
                Locale.ROOT,
                "| %s | %d ms | %.0f/s (%.0f %% of capacity) | %s | %.1f %% | %.1f %% | %.1f %% | %d | %d |%n",
                replay.name(),
                unloaded.p99Nanos() / 1_000_000,
                held.goodputPerSecond(),
                100 * held.goodputPerSecond() / replay.capacityPerSecond(),
                held.p99Nanos() >= TIMEOUT_MILLIS * 1_000_000 ? "timed out" : held.p99Nanos() / 1_000_000 + " ms",
                100 * held.success()[Priority.CRITICAL.ordinal()],
                100 * held.success()[Priority.DEFAULT.ordinal()],
                100 * held.success()[Priority.SHEDDABLE.ordinal()],
                held.shed(),
                held.timedOut());
    }
}
