package io.tollgate.benchmarks.algorithms;

import java.util.List;
import java.util.Locale;

/**
 * Draws the replays as one SVG: a row of panels per algorithm, a column per traffic pattern. Each panel shows
 * the offered requests (grey ticks), the admitted ones (coloured ticks), and the count admitted in the
 * trailing window (the line) against the limit (dashed); the windows' edges are dotted. The same replays
 * always give the same file.
 */
final class ComparisonChart {

    private static final int LEFT = 200;
    private static final int TOP = 50;
    private static final int WIDTH = 300;
    private static final int HEIGHT = 150;
    private static final int GAP = 24;
    private static final int TICKS = 26; // the band at a panel's foot where requests are ticked
    private static final String[] COLOURS = {"#c0392b", "#d68910", "#1f618d"};

    private ComparisonChart() {}

    /**
     * @param rows the replays, a row per algorithm, each with a replay per traffic pattern in the same order
     */
    static String svg(List<List<Replay>> rows, long limit, long windowMicros, long horizonMicros) {
        int columns = rows.get(0).size();
        int width = LEFT + columns * (WIDTH + GAP) + 10;
        int height = TOP + rows.size() * (HEIGHT + GAP) + 30;
        StringBuilder svg = new StringBuilder();
        svg.append(format(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                        + " font-family=\"sans-serif\" font-size=\"12\">%n",
                width, height, width, height));
        svg.append(format("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
        svg.append(format(
                "<text x=\"%d\" y=\"18\" font-size=\"14\" font-weight=\"bold\">Requests admitted: at most %d per"
                        + " %d s window, one client, %d s</text>%n",
                LEFT, limit, windowMicros / 1_000_000, horizonMicros / 1_000_000));
        for (int column = 0; column < columns; column++) {
            svg.append(format(
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>%n",
                    LEFT + column * (WIDTH + GAP) + WIDTH / 2,
                    TOP - 10,
                    rows.get(0).get(column).traffic().name()));
        }
        for (int row = 0; row < rows.size(); row++) {
            int y = TOP + row * (HEIGHT + GAP);
            svg.append(format(
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-weight=\"bold\" fill=\"%s\">%s</text>%n",
                    LEFT - 12,
                    y + HEIGHT / 2,
                    COLOURS[row % COLOURS.length],
                    rows.get(row).get(0).algorithm()));
            for (int column = 0; column < columns; column++) {
                panel(
                        svg,
                        rows.get(row).get(column),
                        LEFT + column * (WIDTH + GAP),
                        y,
                        COLOURS[row % COLOURS.length],
                        limit,
                        windowMicros,
                        horizonMicros);
            }
        }
        svg.append(format(
                "<text x=\"%d\" y=\"%d\" fill=\"#555\">grey: offered; coloured: admitted; line: admitted in the"
                        + " trailing %d s; dashed: the limit; dotted: the fixed windows' edges</text>%n",
                LEFT, height - 10, windowMicros / 1_000_000));
        return svg.append("</svg>\n").toString();
    }

    private static void panel(
            StringBuilder svg, Replay replay, int x, int y, String colour, long limit, long window, long horizon) {
        int plot = HEIGHT - TICKS;
        double top = 2.0 * limit + 2;
        svg.append(format(
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#bbb\"/>%n",
                x, y, WIDTH, HEIGHT));
        for (long edge = window; edge < horizon; edge += window) {
            double ex = x + WIDTH * (double) edge / horizon;
            svg.append(format(
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\" stroke-dasharray=\"1,3\"/>%n",
                    ex, y, ex, y + HEIGHT));
        }
        double limitY = y + plot - plot * limit / top;
        svg.append(format(
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"5,4\"/>%n",
                x, limitY, x + WIDTH, limitY));
        svg.append(format("<text x=\"%d\" y=\"%.1f\" fill=\"#333\">%d</text>%n", x + WIDTH + 3, limitY + 4, limit));
        for (long t : replay.traffic().offered()) {
            double tx = x + WIDTH * (double) t / horizon;
            svg.append(format(
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#aaa\"/>%n",
                    tx, y + HEIGHT - 10, tx, y + HEIGHT - 3));
        }
        for (long t : replay.admitted()) {
            double tx = x + WIDTH * (double) t / horizon;
            svg.append(format(
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>%n",
                    tx, y + HEIGHT - 22, tx, y + HEIGHT - 13, colour));
        }
        StringBuilder line = new StringBuilder();
        List<Long> admitted = replay.admitted();
        int first = 0;
        int next = 0;
        for (long t = 0; t <= horizon; t += horizon / 600) {
            while (next < admitted.size() && admitted.get(next) <= t) {
                next++;
            }
            while (first < next && admitted.get(first) <= t - window) {
                first++;
            }
            line.append(format("%.1f,%.1f ", x + WIDTH * (double) t / horizon, y + plot - plot * (next - first) / top));
        }
        svg.append(format(
                "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>%n",
                line.toString().strip(), colour));
        svg.append(format(
                "<text x=\"%d\" y=\"%d\" fill=\"#333\">most in any %d s: %d; in any 1 s: %d</text>%n",
                x + 6,
                y + 14,
                window / 1_000_000,
                replay.mostInAnyInterval(window),
                replay.mostInAnyInterval(1_000_000)));
    }

    private static String format(String pattern, Object... arguments) {
        return String.format(Locale.ROOT, pattern, arguments);
    }
}
