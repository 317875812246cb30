package io.tollgate.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * An SVG line chart of a harness's figures, for docs/: side-by-side panels that share an x axis (requests in
 * flight, say), each on a logarithmic y axis of its own, so that a limiter at 20 000 decisions a second and one at
 * 5 000 000 both read on one page. A series is drawn solid, or dashed for a ceiling (what Redis or the harness does
 * alone); a series keeps its colour in every panel, and the legend names each once.
 */
final class LineChart {

    /** One line: its name in the legend, a value per x (NaN where it was not measured), dashed if a ceiling. */
    record Series(String name, double[] values, boolean dashed) {}

    /** One panel: its title and its lines. */
    record Panel(String title, List<Series> series) {}

    private static final String[] COLORS = {
        "#1b6ac9", "#2a9d5c", "#7b4fbf", "#d1495b", "#f2a541", "#8c564b", "#17becf", "#555555", "#e377c2"
    };

    private static final int PANEL_WIDTH = 420;
    private static final int PANEL_GAP = 70;
    private static final int LEFT = 80;
    private static final int TOP = 50;
    private static final int PLOT_HEIGHT = 280;

    private LineChart() {}

    /**
     * Returns the chart as an SVG document.
     *
     * @param yLabel what the y axis counts, with its unit ("decisions per second")
     * @param milliseconds whether the values are milliseconds (ticks say "ms") rather than counts (ticks say k, M)
     * @param xLabel what the x axis counts ("requests in flight")
     * @param x the x values, shared by every panel; each series has one value per x
     */
    static String svg(String yLabel, boolean milliseconds, String xLabel, int[] x, List<Panel> panels) {
        Map<String, Integer> colors = new LinkedHashMap<>();
        Map<String, Boolean> dashed = new LinkedHashMap<>();
        for (Panel panel : panels) {
            for (Series series : panel.series()) {
                colors.putIfAbsent(series.name(), colors.size());
                dashed.putIfAbsent(series.name(), series.dashed());
            }
        }
        int legendRows = (colors.size() + 2) / 3;
        int width = LEFT + panels.size() * (PANEL_WIDTH + PANEL_GAP);
        int bottom = TOP + PLOT_HEIGHT;
        int height = bottom + 60 + legendRows * 20;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\""
                        + " font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n",
                width,
                height));
        for (int p = 0; p < panels.size(); p++) {
            Panel panel = panels.get(p);
            int left = LEFT + p * (PANEL_WIDTH + PANEL_GAP);
            double[] range = range(panel);
            double low = Math.log10(range[0]);
            double high = Math.log10(range[1]);
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>%n",
                    left,
                    TOP - 20,
                    escape(panel.title())));
            for (double tick : ticks(range[0], range[1])) {
                int y = y(tick, low, high);
                svg.append(String.format(
                        Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
                                + "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n",
                        left,
                        y,
                        left + PANEL_WIDTH,
                        y,
                        left - 6,
                        y + 4,
                        label(tick, milliseconds)));
            }
            for (int i = 0; i < x.length; i++) {
                svg.append(String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>%n",
                        xOf(left, i, x.length),
                        bottom + 18,
                        x[i]));
            }
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    left + PANEL_WIDTH / 2,
                    bottom + 36,
                    escape(xLabel)));
            for (Series series : panel.series()) {
                List<String> points = new ArrayList<>();
                for (int i = 0; i < x.length && i < series.values().length; i++) {
                    double value = series.values()[i];
                    if (value > 0 && !Double.isNaN(value)) {
                        points.add(xOf(left, i, x.length) + "," + y(value, low, high));
                    }
                }
                svg.append(String.format(
                        Locale.ROOT,
                        "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\"%s points=\"%s\"/>%n",
                        COLORS[colors.get(series.name()) % COLORS.length],
                        series.dashed() ? " stroke-dasharray=\"7 5\"" : "",
                        String.join(" ", points)));
            }
        }
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"18\" y=\"%d\" transform=\"rotate(-90 18 %d)\" text-anchor=\"middle\">%s (log scale)</text>%n",
                TOP + PLOT_HEIGHT / 2,
                TOP + PLOT_HEIGHT / 2,
                escape(yLabel)));
        int entry = 0;
        for (Map.Entry<String, Integer> name : colors.entrySet()) {
            int ex = LEFT + (entry % 3) * 300;
            int ey = bottom + 62 + (entry / 3) * 20;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"%s/>"
                            + "<text x=\"%d\" y=\"%d\">%s</text>%n",
                    ex,
                    ey - 4,
                    ex + 24,
                    ey - 4,
                    COLORS[name.getValue() % COLORS.length],
                    dashed.get(name.getKey()) ? " stroke-dasharray=\"7 5\"" : "",
                    ex + 30,
                    ey,
                    escape(name.getKey())));
            entry++;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    /** The panel's range, widened to whole decades: the smallest and largest positive values. */
    private static double[] range(Panel panel) {
        double min = Double.MAX_VALUE;
        double max = 0;
        for (Series series : panel.series()) {
            for (double value : series.values()) {
                if (value > 0 && !Double.isNaN(value)) {
                    min = Math.min(min, value);
                    max = Math.max(max, value);
                }
            }
        }
        if (max == 0) {
            return new double[] {1, 10};
        }
        return new double[] {Math.pow(10, Math.floor(Math.log10(min))), Math.pow(10, Math.ceil(Math.log10(max)))};
    }

    /** 1, 2 and 5 times each power of ten within the range. */
    private static List<Double> ticks(double min, double max) {
        List<Double> ticks = new ArrayList<>();
        for (double decade = min; decade <= max * 1.0001; decade *= 10) {
            for (int step : new int[] {1, 2, 5}) {
                double tick = decade * step;
                if (tick <= max * 1.0001) {
                    ticks.add(tick);
                }
            }
        }
        return ticks;
    }

    private static int y(double value, double low, double high) {
        return TOP + PLOT_HEIGHT - (int) Math.round(PLOT_HEIGHT * (Math.log10(value) - low) / (high - low));
    }

    private static int xOf(int left, int i, int count) {
        return left + 15 + (count == 1 ? 0 : i * (PANEL_WIDTH - 30) / (count - 1));
    }

    private static String label(double value, boolean milliseconds) {
        if (milliseconds) {
            return java.math.BigDecimal.valueOf(value)
                            .round(new java.math.MathContext(2))
                            .stripTrailingZeros()
                            .toPlainString()
                    + " ms";
        }
        if (value >= 1_000_000) {
            return String.format(Locale.ROOT, "%.0fM", value / 1_000_000);
        }
        if (value >= 1_000) {
            return String.format(Locale.ROOT, "%.0fk", value / 1_000);
        }
        return String.format(Locale.ROOT, "%.0f", value);
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
