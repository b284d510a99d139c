package dev.sas.jdbc.internal;

import com.zaxxer.hikari.HikariConfig;
import dev.sas.core.spi.WorkflowVersion;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.Query;

/**
 * PostgreSQL: the claim is one statement (select with {@code FOR UPDATE SKIP LOCKED}, update,
 * and insert of the start events into status channels' outboxes, as data-modifying CTEs); partial indexes keep terminal rows out
 * of the claim and expired scans.
 */
final class PostgresDialect implements Dialect {

    @Override
    public String currentEpochSecondsSql() {
        // clock_timestamp(), not now(): now() is the transaction's start.
        return "SELECT EXTRACT(EPOCH FROM clock_timestamp())";
    }

    @Override
    public String name() {
        return "postgresql";
    }

    @Override
    public String socketTimeoutAdvice() {
        return "Set the driver's socketTimeout (in seconds) in the JDBC URL (?socketTimeout=60) or in the pool's data"
                + " source properties (Spring Boot: spring.datasource.hikari.data-source-properties.socketTimeout=60).";
    }

    @Override
    public void configurePool(HikariConfig config, String poolName, Timeouts timeouts) {
        if (!config.getJdbcUrl().toLowerCase(java.util.Locale.ROOT).contains("applicationname=")) {
            config.addDataSourceProperty("ApplicationName", poolName);
        }
        config.addDataSourceProperty("reWriteBatchedInserts", "true");
        // pgjdbc takes seconds; a setting in the URL wins over these
        config.addDataSourceProperty("connectTimeout", String.valueOf(Timeouts.ceilSeconds(timeouts.connect())));
        config.addDataSourceProperty("loginTimeout", String.valueOf(Timeouts.ceilSeconds(timeouts.connect())));
        config.addDataSourceProperty("socketTimeout", String.valueOf(Timeouts.ceilSeconds(timeouts.socket())));
        // With several hosts (an HA cluster), pgjdbc skips a host it saw as a standby for
        // hostRecheckSeconds (default 10 s), even after that standby was promoted.
        config.addDataSourceProperty("hostRecheckSeconds", "2");
        // Session settings rather than the 'options' property, which an 'options' in the URL would
        // replace. The store's transactions never wait on anything but the database, so a session
        // idle inside one belongs to a client that is frozen, cut off or half-open: the server ends
        // it, or its row locks would hold up the recovery of its tasks for as long as TCP allows.
        config.setConnectionInitSql("SET statement_timeout = " + timeouts.statement().toMillis()
                + "; SET idle_in_transaction_session_timeout = " + timeouts.idleInTransaction().toMillis());
    }

    @Override
    public String insertTasksSql(Tables t, int rows, boolean claimed) {
        // a duplicate aborts a PostgreSQL transaction, so it is skipped rather than raised
        return Dialect.plainInsertTasksSql(t, rows, claimed) + " ON CONFLICT (workflow, business_key) DO NOTHING"
                + " RETURNING task_id";
    }

    @Override
    public String insertTaskArraysSql(Tables t, boolean skipDuplicates) {
        return "INSERT INTO " + t.task() + " (" + Dialect.TASK_INSERT_COLUMNS + ")"
                + " SELECT id, wf, v, bk, " + Dialect.submittedState(false) + ", p, 0, due, 0, 0, sn, 0, tmo, FALSE,"
                + " cr, cr, inp, rt, tc"
                + " FROM unnest(?::varchar[], ?::varchar[], ?::int[], ?::varchar[], ?::int[], ?::bigint[],"
                + " ?::varchar[], ?::bigint[], ?::bigint[], ?::text[], ?::varchar[], ?::varchar[])"
                + " AS u(id, wf, v, bk, p, due, sn, tmo, cr, inp, rt, tc)"
                + (skipDuplicates ? " ON CONFLICT (workflow, business_key) DO NOTHING RETURNING task_id" : "");
    }

    @Override
    public boolean bindsArrays() {
        return true;
    }

    @Override
    public boolean insertTasksReturnsIds() {
        return true;
    }

    @Override
    public String latestCommittedReadSuffix() {
        return "";
    }

    @Override
    public List<ClaimRow> claim(Handle h, Tables t, String instanceId, int limit, long now,
            List<WorkflowVersion> runnable) {
        Query q = h.createQuery(claimSql(t, runnable.size()));
        q.bind(0, now);
        int i = Dialect.bindRunnable(q, 1, runnable);
        q.bind(i, limit).bind(i + 1, instanceId).bind(i + 2, now).bind(i + 3, now).bind(i + 4, EventRows.claimPendingStartAt(now))
                .bind(i + 5, now);
        return q.map((rs, ctx) -> ClaimRow.map(rs))
                .list();
    }

    /**
     * The claim: one statement (now, the runnable versions, limit, instance, now, now, now, now). Its
     * predicate names the claimable states exactly as the partial claim index does, so the index serves it.
     * The start events are not written: the claim leaves them pending in the task row (schema V14,
     * see {@link EventRows}), except in the outbox of a task with a status channel.
     */
    static String claimSql(Tables t, int runnableVersions) {
        String returning = Arrays.stream(ClaimRow.COLUMNS.split(","))
                .map(c -> "t." + c.trim())
                .collect(Collectors.joining(", "));
        return "WITH c AS (SELECT task_id FROM " + t.task()
                + " WHERE locked_by IS NULL AND state IN " + CLAIMABLE_STATES + " AND next_attempt_at <= ?"
                + " AND " + Dialect.runnableFilter(runnableVersions)
                + " ORDER BY priority DESC, next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED),"
                + " u AS (UPDATE " + t.task() + " AS t SET locked_by = ?, lease = t.lease + 1,"
                + " attempt = t.attempt + 1, complete_by = ? + t.step_timeout_ms,"
                + " state = " + Dialect.claimedState("t.state") + ", updated_at = ?,"
                + " " + EventRows.claimSetsPendingStart("t.cancel_requested", "t.state")
                + " FROM c WHERE t.task_id = c.task_id RETURNING " + returning + "),"
                // the start events of tasks with a status channel go to its outbox too
                + " o AS (INSERT INTO " + t.statusOutbox() + " (channel, task_id, business_key, workflow, type,"
                + " step_index, step_name, attempt, at, message)"
                + " SELECT reply_to, task_id, business_key, workflow, CASE WHEN state = 'COMPENSATING'"
                + " THEN 'COMPENSATION_STARTED' ELSE 'STEP_STARTED' END, current_step, current_step_name, attempt, ?,"
                + " NULL FROM u WHERE reply_to IS NOT NULL AND NOT (cancel_requested = TRUE AND state <> 'COMPENSATING')"
                + " ORDER BY priority DESC, next_attempt_at, task_id)"
                + " SELECT * FROM u";
    }

    @Override
    public boolean claimRecordsStatusUpdates() {
        return true;
    }

    @Override
    public String upsertStepSql(Tables t, int rows) {
        return upsertStep(t, "VALUES " + Dialect.valueRows(rows, 9));
    }

    @Override
    public String upsertStepFromArraysSql(Tables t) {
        return upsertStep(t, "SELECT * FROM " + ArrayColumns.unnest(STEP_COLUMN_TYPES));
    }

    private static String upsertStep(Tables t, String rows) {
        return "INSERT INTO " + t.step() + " (task_id, step_index, step_name, state, attempts, output, error,"
                + " started_at, finished_at) " + rows
                + " ON CONFLICT (task_id, step_index) DO UPDATE SET step_name = EXCLUDED.step_name,"
                + " state = EXCLUDED.state, attempts = EXCLUDED.attempts, output = EXCLUDED.output,"
                + " error = EXCLUDED.error, started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at";
    }

    @Override
    public String upsertCompensationSql(Tables t) {
        return "INSERT INTO " + t.step() + " (task_id, step_index, step_name, compensation_state, error, state,"
                + " attempts) VALUES (?, ?, ?, ?, ?, 'COMPLETED', 0)"
                + " ON CONFLICT (task_id, step_index) DO UPDATE SET step_name = EXCLUDED.step_name,"
                + " compensation_state = EXCLUDED.compensation_state, error = EXCLUDED.error";
    }

    @Override
    public void lockSchema(Handle h, Tables t) {
        // concurrent CREATE TABLE IF NOT EXISTS can still collide in pg_class; DDL is transactional
        // here, so one advisory lock for the schema transaction makes the second instance wait and
        // then find everything in place
        h.createQuery("SELECT pg_advisory_xact_lock(hashtext(?))").bind(0, "sas-schema:" + t.prefix())
                .map((rs, ctx) -> 1).one();
    }

    @Override
    public PgSignals signals(StoreContext db) {
        return new PgSignals(db);
    }

    @Override
    public String submitHintSql(Tables t) {
        return "SELECT pg_notify('" + t.notifyChannel("due") + "', '')";
    }

    @Override
    public List<String> refreshStatisticsSql(Tables t) {
        return List.of("ANALYZE " + t.task(), "ANALYZE " + t.step());
    }

    @Override
    public void dropExtras(Handle h, Tables t) {
        for (String f : List.of("notify_submitted", "notify_due", "notify_done", "notify_replies")) {
            h.execute("DROP FUNCTION IF EXISTS " + t.prefix() + f + "() CASCADE");
        }
    }

    @Override
    public void afterSchemaApplied(Handle h, Tables t) {
        // A fresh, never-analysed table makes the planner scan and sort every pending row for the
        // claim until autovacuum gets to it; statistics from the start give the index plans at once.
        // (A statement's cached generic plan, made while the table is tiny, is refreshed as the
        // table fills: PlannerStatistics.)
        h.execute("ANALYZE " + t.task() + ", " + t.step() + ", " + t.event() + ", " + t.lease());
    }
}
