package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.SasRuntime;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node that dies in the takeover phase: a SAS runtime in its own JVM whose step blocks forever,
 * so it claims and holds up to {@code tasks} tasks until the parent kills it with SIGKILL.
 *
 * <pre>java -cp ... dev.sas.bench.TakeoverNode URL PREFIX TASKS COMPLETE_WITHIN_MS POOL_SIZE</pre>
 *
 * Prints {@code HELD <in flight> STARTED <step bodies entered>} every 50 ms on standard output.
 * Its supervisor is off: the node that dies is not the active supervisor (else add up to three
 * supervisor intervals for its lease to lapse).
 */
public final class TakeoverNode {

    /** Large claims, so the first claims' deadlines have not run far when the last task is held. */
    static final int CLAIM_BATCH = 250;

    private TakeoverNode() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: TakeoverNode URL PREFIX TASKS COMPLETE_WITHIN_MS POOL_SIZE");
            System.exit(64);
        }
        String url = args[0];
        String prefix = args[1];
        int tasks = Integer.parseInt(args[2]);
        Duration completeWithin = Duration.ofMillis(Long.parseLong(args[3]));
        ProcessHandle.current().parent().ifPresent(h -> ChildJvm.dieWithParent(h.pid()));

        CountDownLatch never = new CountDownLatch(1);
        AtomicInteger started = new AtomicInteger();
        // one thread per held task, so every claimed step is really running (blocked) when the node dies
        ExecutorService steps = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "takeover-step");
            t.setDaemon(true);
            return t;
        });
        HikariDataSource pool = new Target("takeover", url, Integer.parseInt(args[4])).pool("takeover-node");
        JdbcStateStore store = JdbcStateStore.builder().dataSource(pool).tablePrefix(prefix).createSchema(false).build();
        SasRuntime sas = SasRuntime.builder()
                .stateStore(store)
                .workflow(Takeover.workflow(completeWithin, () -> {
                    started.incrementAndGet();
                    never.await();
                }))
                .instanceId("takeover-node-" + ProcessHandle.current().pid())
                .maxInFlight(tasks)
                .claimBatchSize(Math.min(CLAIM_BATCH, tasks))
                .stepExecutor(steps)
                .supervisorEnabled(false)
                .build();
        sas.start();
        System.out.println("READY " + sas.instanceId());
        System.out.flush();
        while (true) {
            System.out.println("HELD " + sas.inFlight() + " STARTED " + started.get());
            System.out.flush();
            Thread.sleep(50);
        }
    }
}
