package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;

/** SAS with its JDBC store, {@code steps} no-op steps per task, 4 scheduler threads, default settings otherwise. */
public final class SasSystem implements BenchSystem {

    private final HikariDataSource pool;
    private final CountingDataSource counting;
    private final String prefix;
    private final JdbcStateStore store;
    private final SasRuntime sas;
    private final Workflow<String> workflow;

    public SasSystem(Target target, Probe probe, String prefix, int steps, int threads) {
        this.prefix = prefix;
        this.pool = target.pool("sas");
        this.counting = new CountingDataSource(pool);
        try {
            this.store = JdbcStateStore.builder().dataSource(counting.dataSource()).tablePrefix(prefix).build();
            Workflow.Builder<String> wb = Workflow.builder("bench" + steps, Codec.string());
            for (int s = 0; s < steps; s++) {
                int index = s;
                wb.step("s" + s, b -> b.execute(ctx -> {
                    if (index == 0) {
                        probe.started(Integer.parseInt(ctx.businessKey().substring(1)));
                    }
                    return null;
                }));
            }
            this.workflow = wb.build();
            this.sas = SasRuntime.builder()
                    .stateStore(store)
                    .workflow(workflow)
                    .schedulerThreads(threads)
                    .onEvent(e -> {
                        if (e.type() == TaskEvent.Type.PROCESSED) {
                            probe.done(Integer.parseInt(e.businessKey().substring(1)));
                        }
                    })
                    .build();
        } catch (RuntimeException e) {
            Target.dropTables(pool, prefix);
            pool.close();
            throw e;
        }
    }

    @Override
    public String name() {
        return "SAS";
    }

    @Override
    public void submit(int i) {
        sas.client().submit(workflow, "t" + i, "x").id();
    }

    @Override
    public void submitBatch(int from, int count) {
        java.util.Map<String, String> inputs = new java.util.LinkedHashMap<>();
        for (int i = from; i < from + count; i++) {
            inputs.put("t" + i, "x");
        }
        sas.client().submitAll(workflow, inputs);
    }

    @Override
    public long completedInStore() {
        return sas.client().countByStatus().getOrDefault(dev.sas.core.TaskStatus.PROCESSED, 0L);
    }

    @Override
    public void start() {
        sas.start();
    }

    @Override
    public CountingDataSource.Counts counts() {
        return counting.counts();
    }

    /** The runtime's own counters, for sanity checks. */
    public dev.sas.core.SasMetrics metrics() {
        return sas.metrics();
    }

    @Override
    public void close() {
        try {
            sas.close();
            store.close();
        } finally {
            Target.dropTables(pool, prefix);
            pool.close();
        }
    }
}
