package dev.sas.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The throughput and latency targets (issue 12) checked against the medians of a run: one row per
 * target, one column per database; a cell is the measured ratio or value and "met" or "MISSED",
 * or "n/a" when the run did not measure it.
 */
final class Goals {

    /** One target: its label and the cell for one database. */
    record Goal(String label, java.util.function.BiFunction<Bench.Options, String, String> cell) {
    }

    private Goals() {
    }

    static List<Goal> all(Bench.Options o, Bench.Report r) {
        List<Goal> goals = new ArrayList<>();
        EndToEnd.Mode batch = EndToEnd.Mode.BATCH;
        goals.add(new Goal("SAS submitAll end to end ÷ best db-scheduler scheduleBatch (≥ 2×)", (opt, db) -> {
            String m = EndToEnd.tasksPerSecond(opt, batch);
            return verdict(median(r, db, m, Bench.SAS) / bestDbScheduler(r, db, m, true), x -> x >= 2);
        }));
        goals.add(new Goal("SAS " + o.submitThreads + " threads ÷ 1 thread single submit, end to end"
                + " (≥ 3× on PostgreSQL and MariaDB)", (opt, db) -> {
            double many = median(r, db, EndToEnd.tasksPerSecond(opt, EndToEnd.Mode.SINGLE_MANY_THREADS), Bench.SAS);
            double one = median(r, db, EndToEnd.tasksPerSecond(opt, EndToEnd.Mode.SINGLE_ONE_THREAD), Bench.SAS);
            return db.equals("h2") ? ratioOnly(many / one) : verdict(many / one, x -> x >= 3);
        }));
        goals.add(new Goal("SAS submitAll ÷ raw multi-row INSERT of the same rows, tasks/s (≥ 0.8×)", (opt, db) -> {
            String m = EndToEnd.batchEnqueue(largestDue(opt));
            return verdict(median(r, db, m, Bench.SAS) / median(r, db, m, Bench.RAW), x -> x >= 0.8);
        }));
        goals.add(new Goal("SAS drain per task, largest ÷ smallest backlog (≤ 1.5×)", (opt, db) -> opt.dueSizes.size() < 2
                ? "n/a" : verdict(median(r, db, EndToEnd.dueGrowth(opt.dueSizes), Bench.SAS), x -> x <= 1.5)));
        goals.add(new Goal("SAS drain-only ÷ raw JDBC loop on SAS's table shape (≥ 0.8× on PostgreSQL)",
                (opt, db) -> postgresOnly(db, median(r, db, Bench.DRAIN_COMPLETED, Bench.SAS)
                        / median(r, db, Bench.DRAIN_COMPLETED, Bench.RAW), x -> x >= 0.8)));
        goals.add(new Goal("SAS drain-only ÷ raw JDBC loop on a 4-column table (≥ 0.5× on PostgreSQL)",
                (opt, db) -> postgresOnly(db, median(r, db, Bench.DRAIN_COMPLETED, Bench.SAS)
                        / median(r, db, Bench.DRAIN_COMPLETED, Bench.RAW_MIN), x -> x >= 0.5)));
        goals.add(new Goal("SAS idle submit→start p50 ÷ best db-scheduler (≤ 1×)", (opt, db) -> verdict(
                median(r, db, Bench.IDLE_P50, Bench.SAS) / bestDbScheduler(r, db, Bench.IDLE_P50, false), x -> x <= 1)));
        goals.add(new Goal("SAS 3-step commits/step (≤ 2)", (opt, db) -> {
            double v = median(r, db, "3-step commits/step", Bench.SAS);
            return Double.isNaN(v) ? "n/a" : Stats.fmt(v) + (v <= 2 ? " met" : " **MISSED**");
        }));
        return goals;
    }

    /** The targets as a markdown table, one column per database measured; nothing if none was. */
    static void table(Bench.Options o, Bench.Report r, StringBuilder sb) {
        List<String> dbs = new ArrayList<>(r.values.keySet());
        if (dbs.isEmpty()) {
            return;
        }
        sb.append("Targets (medians of this run):\n\n| target |");
        for (String db : dbs) {
            sb.append(" ").append(db).append(" |");
        }
        sb.append("\n|---|").append("---:|".repeat(dbs.size())).append("\n");
        for (Goal g : all(o, r)) {
            sb.append("| ").append(g.label()).append(" |");
            for (String db : dbs) {
                sb.append(" ").append(g.cell().apply(o, db)).append(" |");
            }
            sb.append("\n");
        }
        sb.append("\n");
    }

    static int largestDue(Bench.Options o) {
        return o.dueSizes.get(o.dueSizes.size() - 1);
    }

    private static double median(Bench.Report r, String db, String metric, String system) {
        return Stats.median(r.get(db, metric, system));
    }

    /** The better db-scheduler strategy's median (higher or lower is better), NaN if neither ran. */
    static double bestDbScheduler(Bench.Report r, String db, String metric, boolean higherBetter) {
        double f = median(r, db, metric, Bench.DBS_FETCH);
        double l = median(r, db, metric, Bench.DBS_LOCK);
        if (Double.isNaN(f)) {
            return l;
        }
        if (Double.isNaN(l)) {
            return f;
        }
        return higherBetter ? Math.max(f, l) : Math.min(f, l);
    }

    private static String verdict(double ratio, java.util.function.DoublePredicate met) {
        if (Double.isNaN(ratio) || Double.isInfinite(ratio)) {
            return "n/a";
        }
        return String.format("%.2f×", ratio) + (met.test(ratio) ? " met" : " **MISSED**");
    }

    /** A target set for PostgreSQL only: elsewhere the ratio without a verdict. */
    private static String postgresOnly(String db, double ratio, java.util.function.DoublePredicate met) {
        return db.equals("postgres") ? verdict(ratio, met) : ratioOnly(ratio);
    }

    private static String ratioOnly(double ratio) {
        return Double.isNaN(ratio) || Double.isInfinite(ratio) ? "n/a" : String.format("%.2f×", ratio);
    }
}
