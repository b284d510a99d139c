package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.SasMetrics;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
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
        org.h2.tools.Server h2Server = null;
        Target target = t;
        if (t.kind() == Target.Kind.H2) {
            // an H2 file can be open in one process only: serve it over TCP on the loopback to both JVMs
            int port = freeLoopbackPort();
            String dir = Bench.h2Dir(t).toAbsolutePath().toString();
            h2Server = org.h2.tools.Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists").start();
            target = new Target(t.key(), "jdbc:h2:tcp://127.0.0.1:" + port + "/" + dir + "/takeover;LOCK_TIMEOUT=10000");
        }
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
                node = startNode(target.url(), prefix, n, deadline);
                AtomicInteger started = new AtomicInteger();
                AtomicReference<String> lastLine = new AtomicReference<>("");
                Process p = node;
                Thread reader = new Thread(() -> readNode(p, started, lastLine), "takeover-node-output");
                reader.setDaemon(true);
                reader.start();
                long firstStarted = 0;
                long waitUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(60_000, o.timeoutMs / 4));
                while (true) {
                    if (!node.isAlive()) {
                        throw new IllegalStateException("takeover node exited with " + node.exitValue() + " before holding "
                                + n + " tasks; last output: " + lastLine.get());
                    }
                    if (firstStarted == 0 && started.get() > 0) {
                        firstStarted = System.nanoTime();
                    }
                    if (started.get() >= n && survivor.client().countByStatus().get(TaskStatus.PROCESSING) >= n) {
                        break;
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
            if (node != null && node.isAlive()) {
                node.destroyForcibly();
                node.waitFor(10, TimeUnit.SECONDS);
            }
            Target.dropTables(pool, prefix);
            pool.close();
            if (h2Server != null) {
                h2Server.stop();
            }
        }
    }

    private static Process startNode(String url, String prefix, int n, Duration deadline) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.add("-Xmx512m");
        cmd.add("-Xss256k");
        cmd.add("-Djava.awt.headless=true");
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        cmd.add("-Duser.timezone=UTC");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(TakeoverNode.class.getName());
        cmd.add(url);
        cmd.add(prefix);
        cmd.add(Integer.toString(n));
        cmd.add(Long.toString(deadline.toMillis()));
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    /** Follows the node's output: the step-entered count, and other lines (errors) to our log. */
    private static void readNode(Process p, AtomicInteger started, AtomicReference<String> lastLine) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            int logged = 0;
            while ((line = in.readLine()) != null) {
                lastLine.set(line);
                if (line.startsWith("HELD ")) {
                    String[] f = line.split(" ");
                    started.set(Integer.parseInt(f[3]));
                } else if (logged++ < 20) {
                    Bench.log("    node: " + line);
                }
            }
        } catch (IOException | RuntimeException e) {
            // the node was killed
        }
    }

    /** PROCESSED events in the event log, and the tasks they name. */
    private static long[] processedEvents(HikariDataSource pool, String prefix) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT COUNT(*), COUNT(DISTINCT task_id) FROM " + prefix
                        + "event WHERE type = 'PROCESSED'")) {
            r.next();
            return new long[] {r.getLong(1), r.getLong(2)};
        }
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
