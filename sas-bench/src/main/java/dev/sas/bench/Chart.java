package dev.sas.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.ChartEncoder;
import org.knowm.xchart.style.Styler;

/** The PNG bar chart of one throughput metric (tasks/s, median) per system and database, with XChart. */
final class Chart {

    private Chart() {
    }

    /**
     * Writes the chart of {@code metric} to {@code png}.
     *
     * @return false if there is no figure to draw (the phase did not run)
     */
    static boolean throughput(Bench.Report r, String metric, Path png) throws IOException {
        List<String> dbs = new ArrayList<>();
        for (String db : r.values.keySet()) {
            for (String s : Bench.SYSTEMS) {
                if (!Double.isNaN(Stats.median(r.get(db, metric, s)))) {
                    dbs.add(db);
                    break;
                }
            }
        }
        if (dbs.isEmpty()) {
            return false;
        }
        System.setProperty("java.awt.headless", "true");
        CategoryChart chart = new CategoryChartBuilder()
                .width(900)
                .height(520)
                .title("One-step no-op tasks: " + metric + " (median of the runs; higher is better)")
                .xAxisTitle("database")
                .yAxisTitle("tasks/s")
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setLabelsFontColorAutomaticEnabled(false);
        chart.getStyler().setYAxisDecimalPattern("#,###");
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setAvailableSpaceFill(0.85);
        for (String s : Bench.SYSTEMS) {
            List<Double> ys = new ArrayList<>();
            boolean any = false;
            for (String db : dbs) {
                double v = Stats.median(r.get(db, metric, s));
                any |= !Double.isNaN(v);
                ys.add(Double.isNaN(v) ? null : v); // no bar where the system does not run (n/a)
            }
            if (any) {
                chart.addSeries(s, dbs, ys);
            }
        }
        Path abs = png.toAbsolutePath();
        Files.createDirectories(abs.getParent());
        Files.write(abs, ChartEncoder.getBytes(chart, "png"));
        return true;
    }
}
