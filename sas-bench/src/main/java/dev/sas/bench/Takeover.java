package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.SasMetrics;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Phase 4, takeover: a runtime in a child JVM ({@link TakeoverNode}) claims and holds N tasks, is
 * killed with SIGKILL, and a survivor runtime in this JVM (same tables, no-op step) completes them.
 * Measured: time from the kill to the last {@code PROCESSED}, against the target "step deadline
 * ({@code completeWithin}) + one supervisor interval + 1 s". Checked: every task {@code PROCESSED}
 * exactly once (listener, task states and the event log agree).
 */
final class Takeover {

    static final String WORKFLOW = "takeover";
    static final String STEP = "hold";

    /** How long the node may enter no further step, with every task claimed, before the kill goes ahead. */
    private static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(3);

    /** What the step does (the node blocks, the survivor returns at once). */
    interface Body {
        void run() throws Exception;
    }

    /**
     * The result of one takeover.
     *
     * @param tasks tasks held by the killed node
     * @param completeWithinMs the step's deadline
     * @param supervisorIntervalMs the survivor's supervisor interval
     * @param nodeStartMs child JVM start until every task was claimed and its step entered
     * @param claimSpreadMs first step entered on the node until the last (early claims' deadlines run meanwhile)
     * @param heldBeforeKillMs from the last task held to the kill (deadlines already running)
     * @param firstDoneMs kill until the first {@code PROCESSED} on the survivor
     * @param lastDoneMs kill until the last {@code PROCESSED}: the takeover time
     * @param processed tasks {@code PROCESSED} in the store at the end
     * @param processedEvents {@code PROCESSED} events in the event log
     * @param distinctProcessed tasks with a {@code PROCESSED} event
     * @param duplicateDones {@code PROCESSED} events the survivor's listener saw twice for one task
     * @param recovered claims the survivor's supervisor recovered
     */
    record Result(int tasks, long completeWithinMs, long supervisorIntervalMs, long nodeStartMs, long claimSpreadMs,
            long heldBeforeKillMs,
            double firstDoneMs, double lastDoneMs, long processed, long processedEvents, long distinctProcessed,
            int duplicateDones, long recovered) {

        double targetMs() {
            return completeWithinMs + supervisorIntervalMs + 1000;
        }

        boolean complete() {
            return processed == tasks && processedEvents == tasks && distinctProcessed == tasks && duplicateDones == 0;
        }
    }

    private Takeover() {
    }

    /** The workflow both nodes register: one step, {@code completeWithin}, default retry policy. */
    static Workflow<String> workflow(Duration completeWithin, Body body) {
        return Workflow.builder(WORKFLOW, Codec.string())
                .step(STEP, b -> b.execute(ctx -> {
                    body.run();
                    return null;
                }).completeWithin(completeWithin))
                .build();
    }

    static Result run(Bench.Options o, Target t, String tag) throws Exception {
        int n = o.takeoverTasks;
        Duration deadline = Duration.ofMillis(o.takeoverDeadlineMs);
        Duration interval = Duration.ofMillis(o.takeoverIntervalMs);
        String prefix = tag + "_tk_";
        try (ChildJvm.Shared shared = ChildJvm.Shared.of(t, "takeover")) {
            return run(o, shared.target(), prefix, n, deadline, interval);
        }
    }

    private static Result run(Bench.Options o, Target target, String prefix, int n, Duration deadline, Duration interval)
            throws Exception {
        HikariDataSource pool = target.pool("takeover");
        Process node = null;
        try {
            JdbcStateStore store = JdbcStateStore.builder().dataSource(pool).tablePrefix(prefix).build();
            Probe probe = new Probe(n);
            Workflow<String> wf = workflow(deadline, () -> { });
            SasRuntime survivor = SasRuntime.builder()
                    .stateStore(store)
                    .workflow(wf)
                    .instanceId("takeover-survivor-" + ProcessHandle.current().pid())
                    .schedulerThreads(o.threads)
                    .supervisorInterval(interval)
                    .onEvent(e -> {
                        if (e.type() == TaskEvent.Type.PROCESSED) {
                            probe.done(Integer.parseInt(e.businessKey().substring(1)));
                        }
                    })
                    .build();
            try {
                for (int i = 0; i < n; i++) {
                    survivor.client().submit(wf, "t" + i, "x").id();
                }
                long s0 = System.nanoTime();
                node = ChildJvm.start(TakeoverNode.class, List.of(target.url(), prefix, Integer.toString(n),
                        Long.toString(deadline.toMillis()), Integer.toString(target.poolSize())));
                AtomicInteger started = new AtomicInteger();
                AtomicReference<String> lastLine = new AtomicReference<>("");
                ChildJvm.follow(node, "node", 20, line -> {
                    lastLine.set(line);
                    if (line.startsWith("HELD ")) {
                        started.set(Integer.parseInt(line.split(" ")[3]));
                        return true;
                    }
                    return false;
                });
                long firstStarted = 0;
                int lastEntered = -1;
                long enteredSince = System.nanoTime();
                long waitUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(60_000, o.timeoutMs / 4));
                while (true) {
                    if (!node.isAlive()) {
                        throw new IllegalStateException("takeover node exited with " + node.exitValue() + " before holding "
                                + n + " tasks; last output: " + lastLine.get());
                    }
                    if (firstStarted == 0 && started.get() > 0) {
                        firstStarted = System.nanoTime();
                    }
                    boolean allClaimed = survivor.client().countByStatus().getOrDefault(TaskStatus.PROCESSING, 0L) >= n;
                    int entered = started.get();
                    if (allClaimed && entered >= n) {
                        break;
                    }
                    // On a busy machine a claimed step can miss its deadline before its thread starts; the node
                    // then leaves it to a supervisor and never enters it. Once every task is claimed and the
                    // node has entered no further step for a while, go on: the survivor recovers those too.
                    if (allClaimed && entered == lastEntered && System.nanoTime() - enteredSince > STALL_NANOS) {
                        Bench.log("    node entered " + entered + " of " + n + " steps; the others missed their deadline"
                                + " before starting (machine busy)");
                        break;
                    }
                    if (entered != lastEntered || !allClaimed) {
                        lastEntered = entered;
                        enteredSince = System.nanoTime();
                    }
                    if (System.nanoTime() > waitUntil) {
                        throw new IllegalStateException("takeover node holds only " + started.get() + " of " + n
                                + " tasks after " + Bench.elapsedMs(s0) + " ms; last output: " + lastLine.get());
                    }
                    Thread.sleep(20);
                }
                long held = System.nanoTime();
                long nodeStartMs = TimeUnit.NANOSECONDS.toMillis(held - s0);
                survivor.start();
                Thread.sleep(50);
                long kill = System.nanoTime();
                node.destroyForcibly();
                if (!node.waitFor(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("takeover node did not die within 10 s of SIGKILL");
                }
                long heldBeforeKillMs = TimeUnit.NANOSECONDS.toMillis(kill - held);
                boolean ok = probe.awaitDone(n, Math.max(o.timeoutMs, deadline.toMillis() * 3 + interval.toMillis() * 5));
                if (ok) {
                    Thread.sleep(Math.min(1000, interval.toMillis())); // a second PROCESSED would show up here
                }
                long first = Long.MAX_VALUE;
                long last = 0;
                for (int i = 0; i < n; i++) {
                    long d = probe.doneAt(i);
                    if (d != 0) {
                        first = Math.min(first, d);
                        last = Math.max(last, d);
                    }
                }
                SasMetrics m = survivor.metrics();
                Map<TaskStatus, Long> counts = survivor.client().countByStatus();
                long[] events = processedEvents(pool, prefix);
                long spreadMs = TimeUnit.NANOSECONDS.toMillis(held - (firstStarted == 0 ? held : firstStarted));
                Result r = new Result(n, deadline.toMillis(), interval.toMillis(), nodeStartMs, spreadMs, heldBeforeKillMs,
                        first == Long.MAX_VALUE ? Double.NaN : (first - kill) / 1e6,
                        ok ? (last - kill) / 1e6 : Double.NaN,
                        counts.getOrDefault(TaskStatus.PROCESSED, 0L), events[0], events[1], probe.duplicateDones(),
                        m.timeoutsRecovered());
                Bench.log(String.format("  %-30s takeover of %d tasks: node held them after %d ms (claims spread over %d ms), killed %d ms later;"
                                + " survivor: first PROCESSED after %s ms, last after %s ms (target <= %s ms);"
                                + " %d PROCESSED, %d events for %d tasks, %d recovered by the supervisor", Bench.SAS, n,
                        nodeStartMs, spreadMs, heldBeforeKillMs, Stats.fmt(r.firstDoneMs()), Stats.fmt(r.lastDoneMs()),
                        Stats.fmt(r.targetMs()), r.processed(), r.processedEvents(), r.distinctProcessed(), r.recovered()));
                return r;
            } finally {
                survivor.close();
                store.close();
            }
        } finally {
            ChildJvm.kill(node);
            Target.dropTables(pool, prefix);
            pool.close();
        }
    }

    /** PROCESSED events in the event log (a row's own or the one it shares, schema 8), and the tasks they name. */
    private static long[] processedEvents(HikariDataSource pool, String prefix) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT COUNT(*), COUNT(DISTINCT task_id) FROM " + prefix
                        + "event WHERE type = 'PROCESSED' OR then_type = 'PROCESSED'")) {
            r.next();
            return new long[] {r.getLong(1), r.getLong(2)};
        }
    }
}
