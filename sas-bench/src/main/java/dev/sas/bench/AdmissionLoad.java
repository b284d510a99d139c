package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The admission phase (issue 28): a backlog of healthy slow steps must end with no time-out, no
 * retry and no ERROR. Per database, per step length and per number of runtimes: {@code tasks}
 * one-step tasks whose step sleeps for the step length (with {@code completeWithin} 3 s, as in the
 * issue) are submitted with {@code submitAll} to runtimes already running in this JVM, each with
 * its own store and pool on one database, default settings except the scheduler threads; when all
 * are final, the store's events are read back for every task and counted: time-outs
 * ({@code STEP_TIMED_OUT}), retries ({@code STEP_RETRYING}, and a {@code STEP_STARTED} of attempt
 * 2 or more), ERROR (or compensation), and tasks not PROCESSED. Wall time runs from the submit to
 * the last task final.
 */
final class AdmissionLoad {

    /** What a healthy step is given to finish, as in issue 28's workload. */
    static final Duration COMPLETE_WITHIN = Duration.ofSeconds(3);

    /** One row of the phase's table. */
    record Result(long stepMs, int runtimes, int threads, int tasks, long processed, long timeouts, long retries,
            long errors, long deadlinesMissed, double wallSeconds, String states) {

        boolean healthy() {
            return processed == tasks && timeouts == 0 && retries == 0 && errors == 0;
        }
    }

    private AdmissionLoad() {
    }

    /** Every configured row on {@code t}; threads per row: the first of {@code threads} for the shortest step, and so on. */
    static List<Result> run(Bench.Options o, Target t, String tag) throws Exception {
        List<Result> out = new ArrayList<>();
        for (int i = 0; i < o.admissionStepsMs.size(); i++) {
            long stepMs = o.admissionStepsMs.get(i);
            int threads = o.admissionThreads.get(Math.min(i, o.admissionThreads.size() - 1));
            for (int runtimes : o.admissionRuntimes) {
                Bench.log(t.key() + ": admission, " + o.admissionTasks + " tasks of " + stepMs + " ms on " + runtimes
                        + " runtime(s), " + threads + " threads each");
                Result r = once(t, tag + "a" + stepMs + "r" + runtimes + "_", stepMs, runtimes, threads,
                        o.admissionTasks, o.timeoutMs);
                Bench.log(t.key() + ": " + r);
                out.add(r);
            }
        }
        return out;
    }

    private static Result once(Target t, String prefix, long stepMs, int runtimes, int threads, int tasks,
            long timeoutMs) throws Exception {
        Workflow<String> wf = Workflow.builder("admission", Codec.string())
                .step("work", s -> s.execute(ctx -> {
                    Thread.sleep(stepMs); // the workload: a healthy step of this length
                    return "ok";
                }).completeWithin(COMPLETE_WITHIN))
                .build();
        List<HikariDataSource> pools = new ArrayList<>();
        List<JdbcStateStore> stores = new ArrayList<>();
        List<SasRuntime> nodes = new ArrayList<>();
        try {
            for (int n = 0; n < runtimes; n++) {
                HikariDataSource pool = t.pool("admission");
                pools.add(pool);
                JdbcStateStore store = JdbcStateStore.builder().dataSource(pool).tablePrefix(prefix).build();
                stores.add(store);
                SasRuntime node = SasRuntime.builder().stateStore(store).workflow(wf).instanceId("adm-node-" + n)
                        .schedulerThreads(threads).build();
                nodes.add(node);
                node.start();
            }
            Map<String, String> inputs = new LinkedHashMap<>();
            for (int i = 0; i < tasks; i++) {
                inputs.put("k" + i, "x");
            }
            long started = System.nanoTime();
            List<TaskHandle> handles = nodes.get(0).client().submitAll(wf, inputs);
            JdbcStateStore store = stores.get(0);
            long deadline = started + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            Map<TaskStatus, Long> counts = store.countByStatus();
            while (finished(counts) < tasks && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
                counts = store.countByStatus();
            }
            double wall = (System.nanoTime() - started) / 1e9;
            long timeouts = 0;
            long retries = 0;
            long errors = 0;
            for (TaskHandle h : handles) {
                for (TaskEvent e : store.events(h.id())) {
                    switch (e.type()) {
                        case STEP_TIMED_OUT -> timeouts++;
                        case STEP_STARTED -> retries += e.attempt() > 1 ? 1 : 0;
                        case STEP_RETRYING -> retries++;
                        case ERROR, COMPENSATING -> errors++;
                        default -> { }
                    }
                }
            }
            long missed = 0;
            for (SasRuntime node : nodes) {
                missed += node.metrics().deadlinesMissed();
            }
            return new Result(stepMs, runtimes, threads, tasks, counts.getOrDefault(TaskStatus.PROCESSED, 0L),
                    timeouts, retries, errors, missed, wall, counts.toString());
        } finally {
            for (SasRuntime node : nodes) {
                node.close();
            }
            for (JdbcStateStore s : stores) {
                s.close();
            }
            if (!pools.isEmpty()) {
                Target.dropTables(pools.get(0), prefix);
            }
            for (HikariDataSource p : pools) {
                p.close();
            }
        }
    }

    private static long finished(Map<TaskStatus, Long> counts) {
        long done = 0;
        for (Map.Entry<TaskStatus, Long> e : counts.entrySet()) {
            if (e.getKey().isFinal() || e.getKey() == TaskStatus.ERROR) {
                done += e.getValue();
            }
        }
        return done;
    }

    /** The phase's table for every database it ran on. */
    static String markdown(Map<String, List<Result>> byDb) {
        StringBuilder sb = new StringBuilder();
        sb.append("| db | step | runtimes | threads each | tasks | PROCESSED | time-outs | retries | ERROR |"
                + " deadlines missed (metrics) | wall s |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<String, List<Result>> e : byDb.entrySet()) {
            for (Result r : e.getValue()) {
                sb.append(String.format(Locale.ROOT, "| %s | %,d ms | %d | %d | %,d | %,d | %d | %d | %d | %d | %.1f |%n",
                        e.getKey(), r.stepMs(), r.runtimes(), r.threads(), r.tasks(), r.processed(), r.timeouts(),
                        r.retries(), r.errors(), r.deadlinesMissed(), r.wallSeconds()));
            }
        }
        return sb.toString();
    }
}
