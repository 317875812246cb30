package io.tollgate.benchmarks.shedding;

import io.tollgate.Priority;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Draws the replays as one SVG: a column per run, three rows of panels over time: requests per second (offered,
 * served in time, the capacity), the 99th percentile of the latency of the requests admitted (on a log scale,
 * against twice the unloaded one), and the share of each priority served. The same replays always give the same
 * file.
 */
final class SheddingChart {

    private static final int LEFT = 70;
    private static final int TOP = 60;
    private static final int WIDTH = 300;
    private static final int HEIGHT = 150;
    private static final int GAP = 70;
    private static final String[] PRIORITY_COLOURS = {"#1e8449", "#1f618d", "#c0392b"};
    private static final String SERVED = "#1f618d";

    private SheddingChart() {}

    static String svg(List<SheddingReplay> replays, LoadProfile profile) {
        int width = LEFT + replays.size() * (WIDTH + GAP);
        int height = TOP + 3 * (HEIGHT + GAP) + 10;
        StringBuilder svg = new StringBuilder();
        svg.append(format(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                        + " font-family=\"sans-serif\" font-size=\"12\">%n",
                width, height, width, height));
        svg.append(format("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
        svg.append(format(
                "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">A service of %d workers (%.0f"
                        + " requests/s), offered %.1fx to %.0fx its capacity; clients give up after 1 s</text>%n",
                LEFT,
                LoadSheddingComparison.WORKERS,
                profile.capacityPerSecond(),
                profile.startFactor(),
                profile.endFactor()));
        double unloadedP99 =
                replays.get(0).summary(0, LoadSheddingComparison.UNLOADED_TO).p99Nanos() / 1e6;
        for (int column = 0; column < replays.size(); column++) {
            SheddingReplay replay = replays.get(column);
            int x = LEFT + column * (WIDTH + GAP);
            svg.append(format(
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>%n",
                    x + WIDTH / 2, TOP - 22, replay.name()));
            double top = profile.capacityPerSecond() * profile.endFactor() * 1.1;
            int y = TOP;
            frame(svg, x, y, "requests/s", profile);
            line(svg, x, y, top, profile.capacityPerSecond(), "#333", "capacity");
            series(svg, replay, x, y, 0, top, false, second -> second.offeredRate(), "#999");
            series(svg, replay, x, y, 0, top, false, second -> sum(second.served()), SERVED);
            axis(svg, x, y, 0, top, false, new double[] {0, 800, 1600, 2400}, "%.0f");
            legend(svg, x, y, new String[] {"offered", "served in time"}, new String[] {"#999", SERVED});

            y += HEIGHT + GAP;
            frame(svg, x, y, "p99 latency of admitted requests, ms", profile);
            logLine(svg, x, y, 2 * unloadedP99, "#333", "2x unloaded");
            series(svg, replay, x, y, 10, 2000, true, second -> percentile(second), "#884ea0");
            axis(svg, x, y, 10, 2000, true, new double[] {10, 100, 1000}, "%.0f");

            y += HEIGHT + GAP;
            frame(svg, x, y, "share served", profile);
            for (Priority priority : Priority.values()) {
                int p = priority.ordinal();
                series(
                        svg,
                        replay,
                        x,
                        y,
                        0,
                        1.05,
                        false,
                        second -> second.offered()[p] == 0 ? 1 : (double) second.served()[p] / second.offered()[p],
                        PRIORITY_COLOURS[p]);
            }
            axis(svg, x, y, 0, 1.05, false, new double[] {0, 0.5, 1}, "%.1f");
            String[] names = {"critical", "default", "sheddable"};
            legend(svg, x, y, names, PRIORITY_COLOURS);
        }
        return svg.append("</svg>\n").toString();
    }

    private static void frame(StringBuilder svg, int x, int y, String title, LoadProfile profile) {
        svg.append(format(
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#bbb\"/>%n",
                x, y, WIDTH, HEIGHT));
        svg.append(format("<text x=\"%d\" y=\"%d\" fill=\"#333\">%s</text>%n", x, y - 6, title));
        long seconds = profile.durationNanos() / 1_000_000_000L;
        for (long t = 0; t <= seconds; t += 15) {
            double tx = x + WIDTH * (double) t / seconds;
            svg.append(format(
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%d s</text>%n",
                    tx, y + HEIGHT + 14, t));
            svg.append(format(
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#999\">%.1fx</text>%n",
                    tx, y + HEIGHT + 28, profile.factorAt(t * 1_000_000_000L)));
        }
    }

    private static void series(
            StringBuilder svg,
            SheddingReplay replay,
            int x,
            int y,
            double bottom,
            double top,
            boolean log,
            ToDoubleFunction<SheddingReplay.Second> value,
            String colour) {
        StringBuilder points = new StringBuilder();
        List<SheddingReplay.Second> seconds = replay.seconds();
        for (int i = 0; i < seconds.size(); i++) {
            double v = value.applyAsDouble(seconds.get(i));
            points.append(
                    format("%.1f,%.1f ", x + WIDTH * (i + 0.5) / seconds.size(), y + height(v, bottom, top, log)));
        }
        svg.append(format(
                "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>%n",
                points.toString().strip(), colour));
    }

    private static void line(StringBuilder svg, int x, int y, double top, double value, String colour, String label) {
        if (label == null) {
            return;
        }
        double ly = y + height(value, 0, top, false);
        svg.append(format(
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"5,4\"/>%n",
                x, ly, x + WIDTH, ly, colour));
        svg.append(format(
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">%s</text>%n",
                x + WIDTH - 4, ly - 4, colour, label));
    }

    private static void logLine(StringBuilder svg, int x, int y, double value, String colour, String label) {
        double ly = y + height(value, 10, 2000, true);
        svg.append(format(
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"5,4\"/>%n",
                x, ly, x + WIDTH, ly, colour));
        svg.append(format(
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">%s (%.0f ms)</text>%n",
                x + WIDTH - 4, ly - 4, colour, label, value));
    }

    private static void axis(
            StringBuilder svg, int x, int y, double bottom, double top, boolean log, double[] ticks, String pattern) {
        for (double tick : ticks) {
            double ty = y + height(tick, bottom, top, log);
            svg.append(format(
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%s</text>%n",
                    x - 4, ty + 4, format(pattern, tick)));
        }
    }

    /** Names the lines above the panel's right corner, the last name rightmost. */
    private static void legend(StringBuilder svg, int x, int y, String[] names, String[] colours) {
        int lx = x + WIDTH;
        for (int i = names.length - 1; i >= 0; i--) {
            svg.append(format(
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"%s\" font-weight=\"bold\">%s</text>%n",
                    lx, y - 6, colours[i], names[i]));
            lx -= 7 * names[i].length() + 12;
        }
    }

    /** The offset from the panel's top of {@code value} between {@code bottom} and {@code top}, clamped. */
    private static double height(double value, double bottom, double top, boolean log) {
        double share = log
                ? (Math.log(Math.max(value, bottom)) - Math.log(bottom)) / (Math.log(top) - Math.log(bottom))
                : (value - bottom) / (top - bottom);
        return HEIGHT - HEIGHT * Math.max(0, Math.min(1, share));
    }

    private static double percentile(SheddingReplay.Second second) {
        return SheddingReplay.percentile(second.latencies(), 0.99) / 1e6;
    }

    private static double sum(int[] counts) {
        double sum = 0;
        for (int count : counts) {
            sum += count;
        }
        return sum;
    }

    private static String format(String pattern, Object... arguments) {
        return String.format(Locale.ROOT, pattern, arguments);
    }
}
