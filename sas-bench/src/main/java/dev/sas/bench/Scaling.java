package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.SasClient;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * How throughput scales with instances: K SAS runtimes, each in its own JVM ({@link ScaleNode}) on
 * one database, while this JVM submits with {@code submitAll} in batches; time from the first submit
 * (wall clock) until the last {@code PROCESSED} event any node saw (each node reports the wall-clock
 * time of its last one; SAS reports it after the commit), then checked against the database's count.
 * Fresh tables per measurement; the nodes first run a warm-up wave of the same size in them, since a
 * fresh JVM's JIT is cold.
 */
final class Scaling {

    private Scaling() {
    }

    /** Metric: end-to-end tasks/s with {@code k} instances. */
    static String tasksPerSecond(int k) {
        return k + (k == 1 ? " instance" : " instances") + " (child JVMs), submitAll e2e, tasks/s";
    }

    /** Metric: throughput with the most instances ÷ with the fewest, in the same run. */
    static String growth(List<Integer> instances) {
        return "instances " + instances.get(instances.size() - 1) + " ÷ " + instances.get(0) + ", tasks/s";
    }

    /** Metric: the smallest share of the tasks one of the instances ran, with the most instances. */
    static String smallestShare(List<Integer> instances) {
        return instances.get(instances.size() - 1) + " instances, smallest share of the tasks, %";
    }

    /** One run: each instance count in turn. */
    static void run(Bench.Options o, Target t, Bench.Report r, String db, String tag) throws Exception {
        List<Double> rates = new ArrayList<>();
        try (ChildJvm.Shared shared = ChildJvm.Shared.of(t, "scale")) {
            for (int k : o.scaleInstances) {
                double[] shares = new double[k];
                double rate = once(o, shared.target(), r, db, tag + "_k" + k + "_", k, shares);
                rates.add(rate);
                r.add(db, tasksPerSecond(k), Bench.SAS, rate);
                if (k == o.scaleInstances.get(o.scaleInstances.size() - 1) && k > 1) {
                    double min = 100;
                    for (double s : shares) {
                        min = Math.min(min, s);
                    }
                    r.add(db, smallestShare(o.scaleInstances), Bench.SAS, min);
                }
            }
        }
        if (rates.size() > 1) {
            r.add(db, growth(o.scaleInstances), Bench.SAS, rates.get(rates.size() - 1) / rates.get(0));
        }
    }

    /** K nodes on fresh tables: warm-up wave, then the measured wave. Returns tasks/s; fills each node's share in %. */
    private static double once(Bench.Options o, Target t, Bench.Report r, String db, String prefix, int k, double[] shares)
            throws Exception {
        int n = o.scaleTasks;
        HikariDataSource pool = t.pool("scale");
        List<Process> nodes = new ArrayList<>();
        try {
            // creates the schema the nodes open with createSchema(false)
            JdbcStateStore store = JdbcStateStore.builder().dataSource(pool).tablePrefix(prefix).build();
            Workflow<String> wf = ScaleNode.workflow();
            SasClient client = SasClient.builder().stateStore(store).workflow(wf).build();
            CountDownLatch ready = new CountDownLatch(k);
            AtomicLongArray done = new AtomicLongArray(k);
            AtomicLongArray lastMicros = new AtomicLongArray(k);
            AtomicReference<String> lastLine = new AtomicReference<>("");
            for (int i = 0; i < k; i++) {
                int slot = i;
                Process p = ChildJvm.start(ScaleNode.class, List.of(t.url(), prefix, Integer.toString(o.threads),
                        Integer.toString(t.poolSize())));
                nodes.add(p);
                ChildJvm.follow(p, "scale-node-" + i, 20, line -> {
                    if (line.startsWith("READY ")) {
                        ready.countDown();
                        return true;
                    }
                    if (line.startsWith("DONE ")) {
                        String[] f = line.split(" ");
                        lastMicros.set(slot, Long.parseLong(f[2]));
                        done.set(slot, Long.parseLong(f[1]));
                        return true;
                    }
                    lastLine.set(line);
                    return false;
                });
            }
            if (!ready.await(Math.max(60_000, o.timeoutMs / 4), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(ready.getCount() + " of " + k + " scale nodes did not start; last output: "
                        + lastLine.get());
            }
            String what = "SAS " + k + " instance(s)";
            // warm-up wave: the nodes' JIT is cold
            wave(o, client, "w", n);
            awaitReports(done, n, o.timeoutMs, nodes, what + " warm-up");
            long[] before = new long[k];
            for (int i = 0; i < k; i++) {
                before[i] = done.get(i);
            }
            long t0 = wave(o, client, "m", n);
            awaitReports(done, 2L * n, o.timeoutMs, nodes, what);
            long end = 0;
            for (int i = 0; i < k; i++) {
                end = Math.max(end, lastMicros.get(i));
            }
            double rate = n / ((end - t0) / 1e6);
            long sum = 0;
            for (int i = 0; i < k; i++) {
                long mine = done.get(i) - before[i];
                sum += mine;
                shares[i] = 100.0 * mine / n;
            }
            long processed = client.countByStatus().getOrDefault(TaskStatus.PROCESSED, 0L);
            if (processed != 2L * n) {
                r.problems.add(db + " " + what + ": " + processed + " of " + 2L * n + " tasks PROCESSED in the database");
            }
            if (sum != n) {
                r.problems.add(db + " " + what + ": the nodes report " + sum + " PROCESSED events for " + n + " tasks");
            }
            r.completed(db, Bench.SAS, processed, 2L * n);
            StringBuilder share = new StringBuilder();
            for (double s : shares) {
                share.append(share.length() == 0 ? "" : " / ").append(Stats.fmt(s)).append(" %");
            }
            Bench.log(String.format("  %-30s %d instance(s) in child JVMs: %s tasks/s end to end (submitAll, batches of %,d);"
                    + " shares %s", Bench.SAS, k, Stats.fmt(rate), o.batch, share));
            return rate;
        } finally {
            for (Process p : nodes) {
                ChildJvm.kill(p);
            }
            Target.dropTables(pool, prefix);
            pool.close();
        }
    }

    /** Submits tasks {@code <keyPrefix>0 .. n-1} with {@code submitAll} in batches; returns the wall-clock µs of the first submit. */
    private static long wave(Bench.Options o, SasClient client, String keyPrefix, int n) {
        Workflow<String> wf = ScaleNode.workflow();
        java.time.Instant start = java.time.Clock.systemUTC().instant();
        for (int from = 0; from < n; from += o.batch) {
            Map<String, String> inputs = new LinkedHashMap<>();
            for (int i = from; i < Math.min(n, from + o.batch); i++) {
                inputs.put(keyPrefix + i, "x");
            }
            client.submitAll(wf, inputs);
        }
        return start.getEpochSecond() * 1_000_000 + start.getNano() / 1_000;
    }

    /** Waits until the nodes' DONE lines add up to {@code total}; fails if a node dies or time runs out. */
    private static void awaitReports(AtomicLongArray done, long total, long timeoutMs, List<Process> nodes, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            long sum = 0;
            for (int i = 0; i < done.length(); i++) {
                sum += done.get(i);
            }
            if (sum >= total) {
                return;
            }
            for (Process p : nodes) {
                if (!p.isAlive()) {
                    throw new IllegalStateException(what + ": a scale node exited with " + p.exitValue());
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(what + ": the nodes report " + sum + " of " + total
                        + " tasks PROCESSED after " + timeoutMs + " ms");
            }
            Thread.sleep(20);
        }
    }
}
