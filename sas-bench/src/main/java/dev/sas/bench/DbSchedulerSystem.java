package dev.sas.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerBuilder;
import com.github.kagkarlsson.scheduler.event.AbstractSchedulerListener;
import com.github.kagkarlsson.scheduler.task.ExecutionComplete;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * db-scheduler with one one-time task, the same thread count, a short polling interval, immediate
 * execution on (its local wake-up for tasks scheduled now), on its documented table DDL.
 */
public final class DbSchedulerSystem implements BenchSystem {

    /** Polling strategy. */
    public enum Strategy {
        FETCH("fetch"), LOCK_AND_FETCH("lock-and-fetch");

        final String label;

        Strategy(String label) {
            this.label = label;
        }
    }

    /** Polling interval given to db-scheduler (its default is 10 s). */
    public static final Duration POLLING_INTERVAL = Duration.ofMillis(20);

    private final HikariDataSource pool;
    private final CountingDataSource counting;
    private final String table;
    private final Strategy strategy;
    private final OneTimeTask<Void> task;
    private final Scheduler scheduler;
    private final AtomicLong submitted = new AtomicLong();
    private volatile boolean started;

    public DbSchedulerSystem(Target target, Probe probe, String prefix, Strategy strategy, int threads) {
        this.strategy = strategy;
        this.table = prefix + "scheduled_tasks";
        this.pool = target.pool("dbs");
        this.counting = new CountingDataSource(pool);
        try {
            createTable(target.kind());
            this.task = Tasks.oneTime("bench").execute((inst, ctx) -> probe.started(Integer.parseInt(inst.getId())));
            SchedulerBuilder b = Scheduler.create(counting.dataSource(), task)
                    .tableName(table)
                    .threads(threads)
                    .pollingInterval(POLLING_INTERVAL)
                    .enableImmediateExecution()
                    .shutdownMaxWait(Duration.ofSeconds(5))
                    .addSchedulerListener(new AbstractSchedulerListener() {
                        @Override
                        public void onExecutionComplete(ExecutionComplete c) {
                            if (c.getResult() == ExecutionComplete.Result.OK) {
                                probe.done(Integer.parseInt(c.getExecution().taskInstance.getId()));
                            }
                        }
                    });
            // db-scheduler's documented defaults for the limits
            b = strategy == Strategy.FETCH ? b.pollUsingFetchAndLockOnExecute(0.5, 3.0) : b.pollUsingLockAndFetch(0.5, 1.0);
            this.scheduler = b.build();
        } catch (RuntimeException e) {
            Target.dropTables(pool, prefix);
            pool.close();
            throw e;
        }
    }

    private void createTable(Target.Kind kind) {
        String t = table;
        String[] ddl = switch (kind) {
            case POSTGRES -> new String[] {
                "create table " + t + " (task_name text not null, task_instance text not null, task_data bytea,"
                    + " execution_time timestamp with time zone not null, picked boolean not null, picked_by text,"
                    + " last_success timestamp with time zone, last_failure timestamp with time zone,"
                    + " consecutive_failures int, last_heartbeat timestamp with time zone, version bigint not null,"
                    + " priority smallint, primary key (task_name, task_instance))",
                "create index " + t + "_exec_idx on " + t + " (execution_time)",
                "create index " + t + "_hb_idx on " + t + " (last_heartbeat)",
                "create index " + t + "_prio_idx on " + t + " (priority desc, execution_time asc)"};
            case MARIADB -> new String[] {
                "create table " + t + " (task_name varchar(100) not null, task_instance varchar(100) not null,"
                    + " task_data blob, execution_time timestamp(6) not null, picked boolean not null,"
                    + " picked_by varchar(50), last_success timestamp(6) null, last_failure timestamp(6) null,"
                    + " consecutive_failures int, last_heartbeat timestamp(6) null, version bigint not null,"
                    + " priority smallint, primary key (task_name, task_instance),"
                    + " index " + t + "_exec_idx (execution_time), index " + t + "_hb_idx (last_heartbeat),"
                    + " index " + t + "_prio_idx (priority desc, execution_time asc))"};
            case H2 -> new String[] {
                "create table " + t + " (task_name varchar(100) not null, task_instance varchar(100) not null,"
                    + " task_data blob, execution_time timestamp with time zone not null, picked boolean not null,"
                    + " picked_by varchar(50), last_success timestamp with time zone,"
                    + " last_failure timestamp with time zone, consecutive_failures int,"
                    + " last_heartbeat timestamp with time zone, version bigint not null, priority smallint,"
                    + " primary key (task_name, task_instance))",
                "create index " + t + "_exec_idx on " + t + " (execution_time)",
                "create index " + t + "_hb_idx on " + t + " (last_heartbeat)",
                "create index " + t + "_prio_idx on " + t + " (priority desc, execution_time asc)"};
        };
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            for (String sql : ddl) {
                s.execute(sql);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create " + t + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String name() {
        return "db-scheduler (" + strategy.label + ")";
    }

    @Override
    public void submit(int i) {
        scheduler.schedule(task.instance(Integer.toString(i)), Instant.now());
        submitted.incrementAndGet();
    }

    @Override
    public void submitBatch(int from, int count) {
        List<TaskInstance<?>> batch = new ArrayList<>(count);
        for (int i = from; i < from + count; i++) {
            batch.add(task.instance(Integer.toString(i)));
        }
        scheduler.scheduleBatch(batch, Instant.now());
        submitted.addAndGet(count);
    }

    /** db-scheduler deletes a one-time task's row when it completes: submitted minus the rows left. */
    @Override
    public long completedInStore() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("select count(*) from " + table)) {
            r.next();
            return submitted.get() - r.getLong(1);
        }
    }

    @Override
    public void start() {
        started = true;
        scheduler.start();
    }

    @Override
    public CountingDataSource.Counts counts() {
        return counting.counts();
    }

    @Override
    public void close() {
        try {
            if (started) {
                scheduler.stop();
            }
        } finally {
            Target.dropTables(pool, table);
            pool.close();
        }
    }
}
