package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.jdbc.JdbcStateStore;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Supervisor recovery latency while retention purges a large backlog (PostgreSQL). Loads N
 * finished tasks (task, step and event rows copied with {@code generate_series} from one task a
 * runtime ran to {@code PROCESSED}, so every column is as the store writes it), then:
 * <ol>
 *   <li>baseline: a runtime whose retention keeps everything; expired claims are planted one at a
 *       time and the time from each claim's deadline to its {@code STEP_TIMED_OUT} event is taken;</li>
 *   <li>purge: a runtime whose retention makes every loaded task qualify, same probes until the
 *       purge has deleted them all; the purge rate is read from the task count.</li>
 * </ol>
 * A planted claim is a task claimed by a "dead" instance with a short step deadline; each probe
 * gets a higher priority than the last, so the dead instance's claim takes the new one and never a
 * probe recovered earlier. Both runtimes run no scheduler: only the supervisor and retention.
 *
 * <pre>
 * java -cp sas-bench/target/sas-bench.jar dev.sas.bench.PurgeLatency --rows 1000000
 * </pre>
 *
 * Options: {@code --rows N} (1,000,000), {@code --supervisor-interval-ms MS} (1,000, the default),
 * {@code --batch N} and {@code --rate N} (retention batch size and deletes per second; the runtime's
 * defaults 1,000 and 5,000), {@code --probe-every-ms MS} (250), {@code --baseline-probes N} (40),
 * {@code --url JDBC} (else {@code SAS_TEST_POSTGRES_URL}, else the local default), {@code --max-purge-seconds S}
 * (900: stop probing and report what was purged by then).
 */
public final class PurgeLatency {

    private static final String WORKFLOW = "purge-probe";
    private static final Duration PROBE_DEADLINE = Duration.ofMillis(200);
    private static final long DAY_MS = Duration.ofDays(1).toMillis();
    /** Rows per INSERT … SELECT. */
    private static final int CHUNK = 100_000;

    private final Map<TaskId, Long> deadlineMs = new ConcurrentHashMap<>();
    private final Map<TaskId, Long> recoveredMs = new ConcurrentHashMap<>();
    private int priority;

    private PurgeLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rows = 1_000_000;
        long intervalMs = SasRuntime.DEFAULT_SUPERVISOR_INTERVAL.toMillis();
        int batch = SasRuntime.DEFAULT_RETENTION_BATCH_SIZE;
        int rate = SasRuntime.DEFAULT_RETENTION_MAX_DELETES_PER_SECOND;
        long probeEveryMs = 250;
        int baselineProbes = 40;
        long maxPurgeSeconds = 900;
        String url = System.getenv().getOrDefault("SAS_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
        for (int i = 0; i < args.length; i++) {
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--rows" -> rows = Integer.parseInt(v.replace("_", ""));
                case "--supervisor-interval-ms" -> intervalMs = Long.parseLong(v);
                case "--batch" -> batch = Integer.parseInt(v);
                case "--rate" -> rate = Integer.parseInt(v);
                case "--probe-every-ms" -> probeEveryMs = Long.parseLong(v);
                case "--baseline-probes" -> baselineProbes = Integer.parseInt(v);
                case "--url" -> url = v;
                case "--max-purge-seconds" -> maxPurgeSeconds = Long.parseLong(v);
                default -> throw new IllegalArgumentException("unknown option " + args[i] + "; see the class Javadoc");
            }
            i++;
        }
        Target t = new Target("postgres", url);
        if (t.kind() != Target.Kind.POSTGRES) {
            throw new IllegalArgumentException("PurgeLatency loads rows with generate_series: PostgreSQL only, got " + url);
        }
        new PurgeLatency().run(t, rows, Duration.ofMillis(intervalMs), batch, rate, probeEveryMs, baselineProbes,
                Duration.ofSeconds(maxPurgeSeconds));
    }

    private void run(Target t, int rows, Duration interval, int batch, int rate, long probeEveryMs, int baselineProbes,
            Duration maxPurge) throws Exception {
        String prefix = "b" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffL) + "_pl_";
        Bench.log("PurgeLatency: " + t.describe() + "; " + Runtime.getRuntime().availableProcessors() + " CPUs, load average "
                + loadAverage() + "; rows " + rows + ", supervisor interval " + interval + ", retention batch " + batch
                + ", max " + rate + " deletes/s, tables " + prefix + "*");
        HikariDataSource pool = t.pool("purge");
        try {
            JdbcStateStore store = JdbcStateStore.builder().dataSource(pool).tablePrefix(prefix).build();
            Workflow<String> wf = Workflow.builder(WORKFLOW, Codec.string())
                    .step("s0", s -> s.execute(ctx -> "done").completeWithin(PROBE_DEADLINE))
                    .build();
            try {
                long l0 = System.nanoTime();
                load(pool, t, store, wf, prefix, rows);
                Bench.log(String.format("loaded %,d PROCESSED tasks finished a day ago (with a step and 4 event rows each)"
                        + " in %,d ms", rows, Bench.elapsedMs(l0)));

                List<Double> baseline;
                try (SasRuntime quiet = runtime(store, wf, interval, Duration.ofDays(30), batch, rate).start()) {
                    baseline = probe(store, quiet, wf, probeEveryMs, () -> deadlineMs.size() >= baselineProbes);
                }
                report("baseline (retention keeps every row)", baseline, interval);

                long[] firstDelete = {0};
                long[] lastCount = {rows};
                long p0 = System.nanoTime();
                List<Double> during;
                try (SasRuntime purging = runtime(store, wf, interval, Duration.ofHours(1), batch, rate).start()) {
                    deadlineMs.clear();
                    recoveredMs.clear();
                    long[] nextCount = {0};
                    long[] nextLog = {0};
                    during = probe(store, purging, wf, probeEveryMs, () -> {
                        if (System.nanoTime() < nextCount[0]) {
                            return false;
                        }
                        nextCount[0] = System.nanoTime() + 2_000_000_000L;
                        // the template task finished just now: retention keeps it
                        long left = processed(pool, prefix) - 1;
                        if (left < rows && firstDelete[0] == 0) {
                            firstDelete[0] = System.nanoTime();
                        }
                        if (left != lastCount[0] && (left == 0 || System.nanoTime() >= nextLog[0])) {
                            nextLog[0] = System.nanoTime() + 10_000_000_000L;
                            Bench.log(String.format("  %,d finished tasks left after %,d ms", left, Bench.elapsedMs(p0)));
                        }
                        lastCount[0] = left;
                        if (left > 0 && Bench.elapsedMs(p0) > maxPurge.toMillis()) {
                            Bench.log(String.format("  stopping after %s with %,d tasks left", maxPurge, left));
                            return true;
                        }
                        return left == 0;
                    });
                }
                long purgeMs = Bench.elapsedMs(firstDelete[0] == 0 ? p0 : firstDelete[0]);
                report("during the purge", during, interval);
                long deleted = rows - lastCount[0];
                Bench.log(String.format("purge: %,d tasks (and %,d step, %,d event rows) deleted in about %,d ms after the"
                                + " first batch: %,.0f tasks/s (limit %,d/s, batch %,d); time from runtime start %,d ms",
                        deleted, deleted, 4L * deleted, purgeMs, deleted * 1000.0 / Math.max(1, purgeMs), rate,
                        batch, Bench.elapsedMs(p0)));
            } finally {
                store.close();
            }
        } finally {
            Target.dropTables(pool, prefix);
            pool.close();
        }
    }

    private SasRuntime runtime(JdbcStateStore store, Workflow<String> wf, Duration interval, Duration retention,
            int batch, int rate) {
        return SasRuntime.builder().stateStore(store).workflow(wf)
                .instanceId("purge-latency-" + retention.toHours() + "h")
                .schedulerEnabled(false)
                .supervisorInterval(interval)
                .retention(retention)
                .retentionBatchSize(batch)
                .retentionMaxDeletesPerSecond(rate)
                .retentionInterval(Duration.ofSeconds(1))
                // recovered probes wait PENDING with nobody to run them: never park them meanwhile
                .unrunnableGrace(Duration.ofDays(1))
                .onEvent(e -> {
                    if (e.type() == TaskEvent.Type.STEP_TIMED_OUT) {
                        recoveredMs.putIfAbsent(e.taskId(), System.currentTimeMillis());
                    }
                })
                .build();
    }

    /** What ends a probe phase, asked between probes. */
    private interface Done {
        boolean done() throws Exception;
    }

    /**
     * Plants one expired claim every {@code everyMs} until {@code done}, then waits for the last
     * recoveries; returns deadline → recovery times in ms.
     */
    private List<Double> probe(JdbcStateStore store, SasRuntime sas, Workflow<String> wf, long everyMs, Done done)
            throws Exception {
        Set<WorkflowVersion> runnable = Set.of(new WorkflowVersion(wf.name(), wf.version()));
        while (!done.done()) {
            priority++;
            sas.client().submit(wf, "probe-" + priority, "x", SubmitOptions.builder().priority(priority).build());
            // in the database's time, in which the submit wrote the task's due time
            List<ClaimedTask> claimed = store.claim("dead-node", 1, store.currentTime().orElseGet(Instant::now), runnable);
            if (claimed.size() == 1) {
                deadlineMs.put(claimed.get(0).taskId(), claimed.get(0).completeBy().toEpochMilli());
            }
            Thread.sleep(everyMs + ThreadLocalRandom.current().nextLong(everyMs / 4 + 1));
        }
        long until = System.currentTimeMillis() + 30_000;
        while (recoveredMs.size() < deadlineMs.size() && System.currentTimeMillis() < until) {
            Thread.sleep(50);
        }
        List<Double> out = new ArrayList<>();
        deadlineMs.forEach((id, deadline) -> {
            Long at = recoveredMs.get(id);
            out.add(at == null ? Double.POSITIVE_INFINITY : (double) (at - deadline));
        });
        return out;
    }

    private static void report(String phase, List<Double> ms, Duration interval) {
        long[] values = ms.stream().mapToLong(d -> d.isInfinite() ? Long.MAX_VALUE : Math.round(d)).sorted().toArray();
        long missing = ms.stream().filter(d -> d.isInfinite()).count();
        long within = ms.stream().filter(d -> d <= interval.toMillis()).count();
        Bench.log(String.format("recovery latency %s: %d probes, deadline → STEP_TIMED_OUT p50 %s ms, p90 %s ms, max %s ms;"
                        + " %d of %d within one supervisor interval (%d ms); %d never recovered", phase, values.length,
                Stats.fmt(Stats.percentile(values, 50)), Stats.fmt(Stats.percentile(values, 90)),
                values.length == 0 ? "n/a" : values[values.length - 1] == Long.MAX_VALUE ? "∞"
                        : Long.toString(values[values.length - 1]),
                within, values.length, interval.toMillis(), missing));
    }

    /** One PROCESSED task run by a runtime, then {@code rows} copies of its task, step and event rows. */
    private static void load(HikariDataSource pool, Target t, JdbcStateStore store, Workflow<String> wf, String prefix,
            int rows) throws Exception {
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).supervisorEnabled(false).build().start()) {
            sas.client().submit(wf, "tmpl-done", "x");
            long until = System.nanoTime() + 120_000_000_000L;
            while (sas.client().countByStatus().get(TaskStatus.PROCESSED) < 1) {
                if (System.nanoTime() > until) {
                    throw new IllegalStateException("the template task did not complete in 120 s");
                }
                Thread.sleep(10);
            }
        }
        String template = ScanCost.claimed(pool, prefix + "task", "tmpl-done");
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(true);
            // finished a day (and n ms) ago: a spread of updated_at, as the purge orders by it
            copy(c, prefix + "task", template, rows, Map.of(
                    "task_id", "CONCAT('p-', g.n)",
                    "business_key", "CONCAT('p', g.n)",
                    "created_at", "x.created_at - " + DAY_MS + " - g.n",
                    "updated_at", "x.updated_at - " + DAY_MS + " - g.n"));
            copy(c, prefix + "step", template, rows, Map.of("task_id", "CONCAT('p-', g.n)"));
            copy(c, prefix + "event", template, rows, Map.of("task_id", "CONCAT('p-', g.n)", "id", ""));
        }
        for (String table : List.of("task", "step", "event")) {
            ScanCost.analyze(pool, t, prefix + table);
        }
    }

    /** Copies every row of {@code table} of task {@code template} {@code rows} times; {@code exprs} replaces columns ("" drops one). */
    private static void copy(Connection c, String table, String template, int rows, Map<String, String> exprs)
            throws SQLException {
        List<String> columns = new ArrayList<>();
        List<String> select = new ArrayList<>();
        for (String col : ScanCost.columns(c, table)) {
            String e = exprs.get(col.toLowerCase(Locale.ROOT));
            if (e != null && e.isEmpty()) {
                continue;
            }
            columns.add(col);
            select.add(e != null ? e : "x." + col);
        }
        String insert = "INSERT INTO " + table + " (" + String.join(", ", columns) + ") SELECT " + String.join(", ", select)
                + " FROM " + table + " x CROSS JOIN generate_series(?, ?) AS g(n) WHERE x.task_id = ?";
        for (long a = 1; a <= rows; a += CHUNK) {
            try (var ps = c.prepareStatement(insert)) {
                ps.setLong(1, a);
                ps.setLong(2, Math.min(rows, a + CHUNK - 1));
                ps.setString(3, template);
                ps.executeUpdate();
            }
        }
    }

    private static long processed(HikariDataSource pool, String prefix) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT COUNT(*) FROM " + prefix + "task WHERE state = 'PROCESSED'")) {
            r.next();
            return r.getLong(1);
        }
    }

    private static String loadAverage() {
        double l = java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return String.format(Locale.ROOT, "%.2f", l);
    }
}
