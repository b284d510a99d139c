package dev.sas.examples.orders;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.SasRuntime;
import dev.sas.core.SasMetrics;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;

/**
 * The first runtime of {@code --crash} mode, run in its own JVM so that it can be killed for real:
 * it connects to the shop's database and services, runs the same workflow, prints {@code READY},
 * then a {@code METRICS} line every 200 ms until it is killed. Not for use on its own.
 */
public final class CrashWorker {

    private CrashWorker() {
    }

    /**
     * Entry point: {@code --db URL --inventory URI --payment URI --shipping URI --instance ID --operator-log PATH}.
     *
     * @throws Exception if the worker cannot start
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opts.put(args[i], args[i + 1]);
        }
        HikariDataSource ds = OrderRun.dataSource(opts.get("--db"), "worker", 8);
        JdbcStateStore store = JdbcStateStore.builder().dataSource(ds).build();
        OrderWorkflow.Agents agents = OrderWorkflow.Agents.connect(URI.create(opts.get("--inventory")),
                URI.create(opts.get("--payment")), URI.create(opts.get("--shipping")));
        Workflow<Order> workflow = OrderWorkflow.create(agents, new OrderDatabase(ds, Clock.systemUTC()));
        SasRuntime sas = OrderRun.runtime(store, workflow, opts.get("--instance"), new OrderStatusBoard(null),
                new OperatorLog(Path.of(opts.get("--operator-log")))).start();
        System.out.println("READY " + sas.instanceId());
        System.out.flush();
        while (true) {
            SasMetrics m = sas.metrics();
            System.out.println("METRICS " + m.retriesScheduled() + " " + m.timeoutsRecovered() + " "
                    + m.deadlinesMissed() + " " + m.staleRejected() + " " + m.tasksProcessed());
            System.out.flush();
            Thread.sleep(200);
        }
    }
}
