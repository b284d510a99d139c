package dev.sas.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Small statistics helpers. */
final class Stats {

    private Stats() {
    }

    /** The p-th percentile (0..100, nearest rank) of the values; NaN if empty. */
    static double percentile(long[] values, double p) {
        if (values.length == 0) {
            return Double.NaN;
        }
        long[] v = values.clone();
        Arrays.sort(v);
        int rank = (int) Math.ceil(p / 100.0 * v.length);
        return v[Math.max(0, Math.min(v.length - 1, rank - 1))];
    }

    static double median(List<Double> values) {
        List<Double> v = new ArrayList<>(values);
        v.removeIf(d -> d == null || d.isNaN());
        if (v.isEmpty()) {
            return Double.NaN;
        }
        v.sort(Double::compare);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    static double min(List<Double> values) {
        return values.stream().filter(d -> !d.isNaN()).mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    static double max(List<Double> values) {
        return values.stream().filter(d -> !d.isNaN()).mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    static String fmt(double d) {
        if (Double.isNaN(d)) {
            return "n/a";
        }
        double a = Math.abs(d);
        if (a >= 1000) {
            return String.format("%,.0f", d);
        }
        if (a >= 100) {
            return String.format("%.0f", d);
        }
        if (a >= 10) {
            return String.format("%.1f", d);
        }
        return String.format("%.2f", d);
    }
}
