package dev.sas.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What users do: submit while the workers run, and time until every task is recorded complete
 * ({@link #run}); and drains of backlogs of different sizes, loaded through each system's batch API
 * ({@link #due}).
 */
final class EndToEnd {

    /** How tasks are submitted in an end-to-end run. */
    enum Mode {
        /** One thread, one task per call (its own transaction). */
        SINGLE_ONE_THREAD("single1"),
        /** {@code --submit-threads} threads (16), one task per call. */
        SINGLE_MANY_THREADS("single16"),
        /** One thread, {@code --batch} tasks (1,000) per call of the batch API. */
        BATCH("batch");

        final String option;

        Mode(String option) {
            this.option = option;
        }

        static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.option.equals(s.trim().toLowerCase(Locale.ROOT))) {
                    return m;
                }
            }
            throw new IllegalArgumentException("unknown end-to-end mode " + s + " (single1,single16,batch)");
        }

        /** The metric prefix, e.g. "e2e 16 threads single submit". */
        String label(Bench.Options o) {
            return switch (this) {
                case SINGLE_ONE_THREAD -> "e2e 1 thread single submit";
                case SINGLE_MANY_THREADS -> "e2e " + o.submitThreads + " threads single submit";
                case BATCH -> String.format("e2e batches of %,d", o.batch);
            };
        }
    }

    private EndToEnd() {
    }

    /** Metric: tasks per second from the first submit to the last task recorded complete. */
    static String tasksPerSecond(Bench.Options o, Mode m) {
        return m.label(o) + ", tasks/s";
    }

    /** Metric: tasks per second the submitter(s) achieved while the workers ran. */
    static String submittedPerSecond(Bench.Options o, Mode m) {
        return m.label(o) + ", submitted/s";
    }

    /** Metric: commits per task over the whole end-to-end run (submits and processing). */
    static String commitsPerTask(Bench.Options o, Mode m) {
        return m.label(o) + ", commits/task";
    }

    /**
     * One end-to-end run: start the system on fresh tables, submit {@code o.tasks} tasks the way
     * {@code mode} says while it runs, and time until the last one is recorded complete; then check
     * the database holds every task as complete.
     */
    static void run(Bench.Options o, Target t, Bench.Report r, String db, String system, String tag, Mode mode)
            throws Exception {
        if (!Bench.supported(system, t)) {
            return;
        }
        int n = o.tasks;
        Probe p = new Probe(n);
        String what = system + " " + mode.option;
        try (BenchSystem s = Bench.create(system, t, p, tag + "e" + mode.ordinal(), 1, o.threads)) {
            s.start();
            Thread.sleep(o.quick ? 50 : 300); // let the workers reach their first poll
            CountingDataSource.Counts c0 = s.counts();
            long t0 = System.nanoTime();
            submit(o, s, mode, n);
            long t1 = System.nanoTime();
            boolean ok = p.awaitDone(n, o.timeoutMs);
            long last = lastDone(p, n);
            CountingDataSource.Counts c = s.counts().minus(c0);
            Bench.check(r, db, system, what + " e2e", p, n, ok);
            checkStore(r, db, what + " e2e", s, n);
            double tps = ok ? n / ((last - t0) / 1e9) : Double.NaN;
            double sps = n / ((t1 - t0) / 1e9);
            r.add(db, tasksPerSecond(o, mode), system, tps);
            r.add(db, submittedPerSecond(o, mode), system, sps);
            r.add(db, commitsPerTask(o, mode), system, (double) c.commits() / n);
            Bench.log(String.format("  %-30s %s: %s tasks/s end to end, submitted %s/s, %s commits/task", system,
                    mode.label(o), Stats.fmt(tps), Stats.fmt(sps), Stats.fmt((double) c.commits() / n)));
        }
    }

    private static void submit(Bench.Options o, BenchSystem s, Mode mode, int n) throws Exception {
        switch (mode) {
            case SINGLE_ONE_THREAD -> {
                for (int i = 0; i < n; i++) {
                    s.submit(i);
                }
            }
            case SINGLE_MANY_THREADS -> {
                int threads = o.submitThreads;
                ExecutorService pool = Executors.newFixedThreadPool(threads, x -> {
                    Thread th = new Thread(x, "bench-submitter");
                    th.setDaemon(true);
                    return th;
                });
                try {
                    List<Future<?>> fs = new ArrayList<>();
                    for (int k = 0; k < threads; k++) {
                        int first = k;
                        fs.add(pool.submit(() -> {
                            for (int i = first; i < n; i += threads) {
                                s.submit(i);
                            }
                            return null;
                        }));
                    }
                    for (Future<?> f : fs) {
                        f.get(); // a failed submit fails the run
                    }
                } finally {
                    pool.shutdownNow();
                }
            }
            case BATCH -> batches(s, 0, n, o.batch);
        }
    }

    /** Submits tasks {@code from .. from + n - 1} in calls of at most {@code batch}. */
    static void batches(BenchSystem s, int from, int n, int batch) throws Exception {
        for (int i = from; i < from + n; i += batch) {
            s.submitBatch(i, Math.min(batch, from + n - i));
        }
    }

    /** Metric: a drain of a backlog of {@code due} tasks, per task. */
    static String drainPerTask(long due) {
        return String.format("drain of %,d due, µs/task", due);
    }

    /** Metric: the batch enqueue (system stopped) that loaded that backlog. */
    static String batchEnqueue(long due) {
        return String.format("batch enqueue of %,d (stopped), tasks/s", due);
    }

    /** Metric: time per task of the largest backlog ÷ that of the smallest, in the same run. */
    static String dueGrowth(List<Integer> sizes) {
        return String.format("drain per task, %,d ÷ %,d due", sizes.get(sizes.size() - 1), sizes.get(0));
    }

    /**
     * Drains of backlogs of each size in {@code o.dueSizes}: load the backlog with the batch API
     * while the system is stopped ({@link #batchEnqueue}: SAS's {@code submitAll} against raw JDBC's
     * multi-row {@code INSERT} of the same rows), start it, and time until the last task completes.
     */
    static void due(Bench.Options o, Target t, Bench.Report r, String db, String system, String tag) throws Exception {
        if (!Bench.supported(system, t)) {
            return;
        }
        List<Double> perTask = new ArrayList<>();
        for (int n : o.dueSizes) {
            Probe p = new Probe(n);
            String what = system + " due " + n;
            try (BenchSystem s = Bench.create(system, t, p, tag + "d" + n, 1, o.threads)) {
                long e0 = System.nanoTime();
                batches(s, 0, n, o.batch);
                double enq = n / ((System.nanoTime() - e0) / 1e9);
                Bench.Drain d = Bench.drain(o, t, s, p, n);
                Bench.check(r, db, system, what + " drain", p, n, d.ok());
                checkStore(r, db, what + " drain", s, n);
                double us = d.ok() ? d.nanos() / 1e3 / n : Double.NaN;
                perTask.add(us);
                r.add(db, batchEnqueue(n), system, enq);
                r.add(db, drainPerTask(n), system, us);
                Bench.log(String.format("  %-30s %,d due: batch enqueue %s tasks/s, drain %s µs/task (%s/s)", system, n,
                        Stats.fmt(enq), Stats.fmt(us), Stats.fmt(1e6 / us)));
            }
        }
        if (o.dueSizes.size() > 1) {
            r.add(db, dueGrowth(o.dueSizes), system, perTask.get(perTask.size() - 1) / perTask.get(0));
        }
    }

    private static long lastDone(Probe p, int n) {
        long last = 0;
        for (int i = 0; i < n; i++) {
            last = Math.max(last, p.doneAt(i));
        }
        return last;
    }

    /** The database must hold every task as complete, whatever the listeners said. */
    private static void checkStore(Bench.Report r, String db, String what, BenchSystem s, int n) throws Exception {
        long stored = s.completedInStore();
        if (stored != n) {
            r.problems.add(db + " " + what + ": " + stored + " of " + n + " tasks complete in the database");
        }
    }
}
