package io.tollgate.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The SVG chart of {@link BatchingLoadHarness}: decisions per second against requests in flight. */
final class BatchingChart {

    private BatchingChart() {}

    /** Two panels, one hot key and 10 000 keys: decisions per second against requests in flight. */
    static String svg(Map<String, double[][]> throughput) {
        int width = 960;
        int height = 420;
        int panel = 420;
        String[] colors = {"#1b6ac9", "#7aa7e0", "#d1495b", "#f2a541", "#2a9d5c"};
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\""
                        + " font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n",
                width,
                height));
        for (int k = 0; k < BatchingLoadHarness.KEYS.length; k++) {
            double max = 0; // each panel has its own scale: the hot key runs ten times higher
            for (double[][] series : throughput.values()) {
                for (double value : series[k]) {
                    max = Math.max(max, value);
                }
            }
            double top = Math.ceil(max / 50_000) * 50_000;
            int left = 70 + k * (panel + 60);
            int bottom = 340;
            int plotHeight = 280;
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"30\" font-size=\"14\" font-weight=\"bold\">%s</text>%n",
                    left,
                    BatchingLoadHarness.KEYS[k] == 1 ? "one hot key" : "10 000 keys"));
            for (int tick = 0; tick <= 5; tick++) {
                double value = top * tick / 5;
                int y = bottom - (int) (plotHeight * tick / 5.0);
                svg.append(String.format(
                        Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
                                + "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%,.0fk</text>%n",
                        left,
                        y,
                        left + panel - 40,
                        y,
                        left - 6,
                        y + 4,
                        value / 1000));
            }
            for (int f = 0; f < BatchingLoadHarness.IN_FLIGHT.length; f++) {
                svg.append(String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>%n",
                        x(left, panel, f),
                        bottom + 18,
                        BatchingLoadHarness.IN_FLIGHT[f]));
            }
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">requests in flight</text>%n",
                    left + (panel - 40) / 2,
                    bottom + 38));
            int color = 0;
            for (Map.Entry<String, double[][]> series : throughput.entrySet()) {
                List<String> points = new ArrayList<>();
                for (int f = 0; f < BatchingLoadHarness.IN_FLIGHT.length; f++) {
                    points.add(x(left, panel, f) + "," + (bottom - (int) (plotHeight * series.getValue()[k][f] / top)));
                }
                svg.append(String.format(
                        Locale.ROOT,
                        "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\" points=\"%s\"/>%n",
                        colors[color % colors.length],
                        String.join(" ", points)));
                color++;
            }
        }
        int color = 0;
        for (String name : throughput.keySet()) {
            int x = 70 + color * 220;
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"392\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                            + "<text x=\"%d\" y=\"398\">%s</text>%n",
                    x,
                    colors[color % colors.length],
                    x + 20,
                    name));
            color++;
        }
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"20\" y=\"%d\" transform=\"rotate(-90 20 %d)\" text-anchor=\"middle\">decisions per"
                        + " second</text>%n</svg>%n",
                200,
                200));
        return svg.toString();
    }

    private static int x(int left, int panel, int f) {
        return left + 10 + f * (panel - 60) / (BatchingLoadHarness.IN_FLIGHT.length - 1);
    }
}
