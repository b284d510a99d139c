package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * The workflow shapes phase (issue 29): per database and per shape, {@code tasks} tasks of a
 * workflow shape with no-op steps are submitted with {@code submitAll} while the runtime is stopped,
 * then drained by one started runtime (default settings, the benchmark's scheduler threads) until
 * every task is final. Reported per executed step (each step body run counts one, every element of a
 * fan-out and every step of every branch included): steps/s, statements/step and commits/step,
 * counted by the {@link CountingDataSource} around the store's pool during the drain, as the
 * three-step row of the one-step phases counts them. A shape is a named workflow factory that counts
 * its step bodies, so a new shape is one entry in {@link #shapes}.
 */
final class ShapesLoad {

    /**
     * A workflow shape: its name in the table, the step bodies one task runs, and the workflow,
     * built around a counter each step body increments.
     */
    record Shape(String name, int stepsPerTask, int tasksDivisor, Function<AtomicLong, Workflow<String>> workflow) {
    }

    /** One row: a shape on one database. */
    record Result(String shape, int tasks, long processed, long stepsRun, long expectedSteps, double wallSeconds,
            long statements, long commits) {

        boolean complete() {
            return processed == tasks && stepsRun >= expectedSteps;
        }

        double stepsPerSecond() {
            return stepsRun / wallSeconds;
        }

        double statementsPerStep() {
            return (double) statements / stepsRun;
        }

        double commitsPerStep() {
            return (double) commits / stepsRun;
        }
    }

    private ShapesLoad() {
    }

    /**
     * The shapes measured: the 3-step chain is the control (the one-step phases' three-step row,
     * through this harness); a 3-branch parallel workflow of one step per branch; a 100-element
     * fan-out with concurrency 16, run for a tenth of the tasks (each is 100 units).
     */
    static List<Shape> shapes() {
        List<Shape> shapes = new ArrayList<>();
        shapes.add(new Shape("3-branch parallel", 3, 1, steps -> Workflow.builder("shape-parallel", Codec.string())
                .parallel("fork", p -> {
                    for (String branch : List.of("a", "b", "c")) {
                        p.branch(branch, b -> b.step(branch + "-work", s -> s.execute(ctx -> {
                            steps.incrementAndGet();
                            return null;
                        })));
                    }
                })
                .build()));
        List<String> hundred = java.util.stream.IntStream.range(0, 100).mapToObj(i -> "e" + i).toList();
        shapes.add(new Shape("100-element fan-out (concurrency 16)", 100, 10, steps -> Workflow
                .builder("shape-fan-out", Codec.string())
                .forEach("each", Codec.string(), ctx -> hundred, each -> each
                        .step("work", s -> s.execute(ctx -> {
                            steps.incrementAndGet();
                            return null;
                        }))
                        .concurrency(16))
                .build()));
        shapes.add(0, new Shape("3-step chain", 3, 1, steps -> {
            Workflow.Builder<String> b = Workflow.builder("shape-chain", Codec.string());
            for (int i = 0; i < 3; i++) {
                b.step("s" + i, s -> s.execute(ctx -> {
                    steps.incrementAndGet();
                    return null;
                }));
            }
            return b.build();
        }));
        return shapes;
    }

    /** Every shape on {@code t}. */
    static List<Result> run(Bench.Options o, Target t, String tag) throws Exception {
        List<Result> out = new ArrayList<>();
        int k = 0;
        for (Shape shape : shapes()) {
            Bench.log(t.key() + ": shape " + shape.name());
            Result r = once(t, tag + "sh" + k++ + "_", shape, Math.max(1, o.shapeTasks / shape.tasksDivisor()), o.threads,
                    o.timeoutMs);
            Bench.log(String.format(Locale.ROOT, "  %s: %.0f steps/s, %.2f stmts/step, %.3f commits/step%s", shape.name(),
                    r.stepsPerSecond(), r.statementsPerStep(), r.commitsPerStep(), r.complete() ? "" : " INCOMPLETE"));
            out.add(r);
        }
        return out;
    }

    private static Result once(Target t, String prefix, Shape shape, int tasks, int threads, long timeoutMs)
            throws Exception {
        AtomicLong steps = new AtomicLong();
        AtomicLong ended = new AtomicLong(); // final events of the workflow's tasks (not of a fan-out's units)
        Workflow<String> wf = shape.workflow().apply(steps);
        HikariDataSource pool = t.pool("shapes");
        CountingDataSource counting = new CountingDataSource(pool);
        try (JdbcStateStore store = JdbcStateStore.builder().dataSource(counting.dataSource()).tablePrefix(prefix).build();
                SasRuntime node = SasRuntime.builder().stateStore(store).workflow(wf).instanceId("shapes-node")
                        .schedulerThreads(threads).onEvent(e -> {
                            if (e.workflow().equals(wf.name()) && (e.type() == TaskEvent.Type.PROCESSED
                                    || e.type() == TaskEvent.Type.ERROR || e.type() == TaskEvent.Type.COMPENSATED)) {
                                ended.incrementAndGet();
                            }
                        }).build()) {
            Map<String, String> inputs = new LinkedHashMap<>();
            for (int i = 0; i < tasks; i++) {
                inputs.put("k" + i, "x");
            }
            node.client().submitAll(wf, inputs);
            CountingDataSource.Counts before = counting.counts();
            long started = System.nanoTime();
            node.start();
            long deadline = started + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            // waits on the runtime's events, not by polling the store: a poll would be counted with the drain
            while (ended.get() < tasks && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            double wall = (System.nanoTime() - started) / 1e9;
            CountingDataSource.Counts c = counting.counts().minus(before);
            Map<TaskStatus, Long> counts = node.client().countByWorkflow().getOrDefault(wf.name(), Map.of());
            return new Result(shape.name(), tasks, counts.getOrDefault(TaskStatus.PROCESSED, 0L), steps.get(),
                    (long) tasks * shape.stepsPerTask(), wall, c.statements(), c.commits());
        } finally {
            Target.dropTables(pool, prefix);
            pool.close();
        }
    }


    /** The phase's table for every database it ran on. */
    static String markdown(Map<String, List<Result>> byDb) {
        StringBuilder sb = new StringBuilder();
        sb.append("| db | shape | tasks | PROCESSED | steps run | steps/s | statements/step | commits/step | wall s |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<String, List<Result>> e : byDb.entrySet()) {
            for (Result r : e.getValue()) {
                sb.append(String.format(Locale.ROOT, "| %s | %s | %,d | %,d | %,d | %,.0f | %.2f | %.3f | %.1f |%n",
                        e.getKey(), r.shape(), r.tasks(), r.processed(), r.stepsRun(), r.stepsPerSecond(),
                        r.statementsPerStep(), r.commitsPerStep(), r.wallSeconds()));
            }
        }
        return sb.toString();
    }
}
