package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One instance of the scaling phase: a SAS runtime in its own JVM running the one-step no-op
 * workflow on tables the parent created, until the parent kills it (or ends: the node halts with it).
 *
 * <pre>java -cp ... dev.sas.bench.ScaleNode URL PREFIX THREADS POOL_SIZE</pre>
 *
 * Prints {@code READY <instance id>} once started, then every 50 ms on standard output
 * {@code DONE <tasks PROCESSED here> <epoch µs of the last PROCESSED event>}: the wall clock is the
 * one clock that JVMs on one machine share, and SAS reports {@code PROCESSED} after its commit.
 */
public final class ScaleNode {

    static final String WORKFLOW = "scale";

    private ScaleNode() {
    }

    /** The workflow every instance registers and the parent submits to: one no-op step. */
    static Workflow<String> workflow() {
        return Workflow.builder(WORKFLOW, Codec.string()).step("noop", b -> b.execute(ctx -> null)).build();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: ScaleNode URL PREFIX THREADS POOL_SIZE");
            System.exit(64);
        }
        ProcessHandle.current().parent().ifPresent(h -> ChildJvm.dieWithParent(h.pid()));
        String url = args[0];
        String prefix = args[1];
        int threads = Integer.parseInt(args[2]);
        HikariDataSource pool = new Target("scale", url, Integer.parseInt(args[3])).pool("scale-node");
        JdbcStateStore store = JdbcStateStore.builder().dataSource(pool).tablePrefix(prefix).createSchema(false).build();
        AtomicLong done = new AtomicLong();
        AtomicLong lastMicros = new AtomicLong();
        java.time.Clock wall = java.time.Clock.systemUTC();
        SasRuntime sas = SasRuntime.builder()
                .stateStore(store)
                .workflow(workflow())
                .instanceId("scale-node-" + ProcessHandle.current().pid())
                .schedulerThreads(threads)
                .onEvent(e -> {
                    if (e.type() == TaskEvent.Type.PROCESSED) {
                        java.time.Instant at = wall.instant();
                        lastMicros.accumulateAndGet(at.getEpochSecond() * 1_000_000 + at.getNano() / 1_000, Math::max);
                        done.incrementAndGet();
                    }
                })
                .build();
        sas.start();
        System.out.println("READY " + sas.instanceId());
        System.out.flush();
        while (true) {
            long last = lastMicros.get();
            System.out.println("DONE " + done.get() + " " + last);
            System.out.flush();
            Thread.sleep(50);
        }
    }
}
