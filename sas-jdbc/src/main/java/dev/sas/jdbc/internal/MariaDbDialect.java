package dev.sas.jdbc.internal;

import com.zaxxer.hikari.HikariConfig;
import dev.sas.core.spi.WorkflowVersion;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.Query;
import org.jdbi.v3.core.statement.Update;

/**
 * MariaDB 10.6+ and MySQL 8: {@code SELECT … FOR UPDATE SKIP LOCKED}, then an update by the
 * selected ids, in the claim's transaction (there is no {@code UPDATE … RETURNING}).
 */
final class MariaDbDialect implements Dialect {

    @Override
    public String currentEpochSecondsSql() {
        // SYSDATE(6), not NOW(6): NOW() is the statement's start and can be pinned by SET TIMESTAMP.
        return "SELECT UNIX_TIMESTAMP(SYSDATE(6))";
    }

    @Override
    public String name() {
        return "mariadb";
    }

    @Override
    public String socketTimeoutAdvice() {
        return "Set the driver's socketTimeout (in milliseconds) in the JDBC URL (?socketTimeout=60000) or in the pool's data"
                + " source properties (Spring Boot: spring.datasource.hikari.data-source-properties.socketTimeout=60000).";
    }

    @Override
    public void configurePool(HikariConfig config, String poolName, Timeouts timeouts) {
        // Connector/J takes milliseconds; a setting in the URL wins over these
        config.addDataSourceProperty("connectTimeout", String.valueOf(timeouts.connect().toMillis()));
        config.addDataSourceProperty("socketTimeout", String.valueOf(timeouts.socket().toMillis()));
        // max_statement_time (seconds, fractions allowed, MariaDB 10.1+) and idle_transaction_timeout
        // (whole seconds, 10.3+) sit in /*M! */ comments, which MySQL skips, leaving the harmless
        // assignment. The store's transactions never wait on anything but the database, so a session
        // idle inside one belongs to a client that is frozen, cut off or half-open: the server ends
        // it, or its row locks would hold up the recovery of its tasks for as long as TCP allows.
        config.setConnectionInitSql("SET @sas_timeouts = 1 /*M!100100 , SESSION max_statement_time = "
                + java.math.BigDecimal.valueOf(timeouts.statement().toMillis(), 3).toPlainString() + " */"
                + " /*M!100300 , SESSION idle_transaction_timeout = "
                + Timeouts.ceilSeconds(timeouts.idleInTransaction()) + " */");
    }

    @Override
    public String latestCommittedReadSuffix() {
        // under REPEATABLE READ a plain select reads the transaction's snapshot, which may predate
        // the submission we collided with; a locking read sees the latest committed row
        return " LOCK IN SHARE MODE";
    }

    @Override
    public boolean isDuplicateKey(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof SQLException s && (s.getErrorCode() == 1062 || "23505".equals(s.getSQLState()))) {
                return true;
            }
        }
        return false;
    }

    @Override
    public List<ClaimRow> claim(Handle h, Tables t, String instanceId, int limit, long now,
            List<WorkflowVersion> runnable) {
        // One query per state, so that the index (state, priority DESC, next_attempt_at) returns the
        // due rows in claim order and the claim reads about `limit` rows instead of sorting every due
        // row. Rows of the second query beyond the limit stay locked only until this commits.
        List<ClaimRow> locked = new ArrayList<>();
        for (String state : CLAIMABLE_STATE_LIST) {
            Query select = h.createQuery(claimSelectSql(t, runnable.size()));
            select.bind(0, state).bind(1, now);
            select.bind(Dialect.bindRunnable(select, 2, runnable), limit);
            locked.addAll(lockedRows(select, now));
        }
        if (locked.size() > limit) {
            locked.sort(ClaimRow.CLAIM_ORDER);
            locked = new ArrayList<>(locked.subList(0, limit));
        }
        if (locked.isEmpty()) {
            return locked;
        }
        return update(h, t, instanceId, now, locked);
    }

    /** The claim's select for one state (state, now, the runnable versions, limit). */
    static String claimSelectSql(Tables t, int runnableVersions) {
        return "SELECT " + ClaimRow.COLUMNS + ", step_timeout_ms FROM " + t.task()
                + " WHERE state = ? AND locked_by IS NULL AND next_attempt_at <= ?"
                + " AND " + Dialect.runnableFilter(runnableVersions)
                + " ORDER BY priority DESC, next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED";
    }

    /** The rows {@code select} locked, as they will be once claimed. */
    private static List<ClaimRow> lockedRows(Query select, long now) {
        return select
                .map((rs, ctx) -> {
                    ClaimRow r = ClaimRow.map(rs);
                    long timeout = rs.getLong("step_timeout_ms");
                    return new ClaimRow(r.taskId(), r.workflow(), r.workflowVersion(), r.businessKey(),
                            dev.sas.core.spi.TaskDecisions.claimed(r.status()),
                            r.priority(), r.lease() + 1, r.currentStep(), r.currentStepName(), r.attempt() + 1,
                            r.failureCount(), now + timeout, r.nextAttemptAt(), r.cancelRequested(), r.input(),
                            r.statusChannel(), r.createdAt(), r.traceContext());
                })
                .list();
    }

    private static List<ClaimRow> update(Handle h, Tables t, String instanceId, long now, List<ClaimRow> locked) {
        // state is assigned last: MySQL evaluates SET assignments left to right on the new values
        Update update = h.createUpdate("UPDATE " + t.task() + " SET locked_by = ?, lease = lease + 1,"
                + " attempt = attempt + 1, complete_by = ? + step_timeout_ms, updated_at = ?,"
                + " " + EventRows.claimSetsPendingStart("cancel_requested", "state") + ","
                + " state = " + Dialect.claimedState("state") + " WHERE task_id IN ("
                + Dialect.placeholders(locked.size()) + ")");
        update.bind(0, instanceId).bind(1, now).bind(2, now).bind(3, EventRows.claimPendingStartAt(now));
        int i = 4;
        for (ClaimRow r : locked) {
            update.bind(i++, r.taskId());
        }
        int n = update.execute();
        if (n != locked.size()) {
            throw new IllegalStateException("claim updated " + n + " of " + locked.size() + " locked rows");
        }
        return new ArrayList<>(locked);
    }

    @Override
    public boolean claimRecordsStatusUpdates() {
        return false;
    }

    @Override
    public String upsertStepSql(Tables t, int rows) {
        return "INSERT INTO " + t.step() + " (task_id, step_index, step_name, state, attempts, output, error,"
                + " started_at, finished_at) VALUES " + Dialect.valueRows(rows, 9)
                + " ON DUPLICATE KEY UPDATE step_name = VALUES(step_name), state = VALUES(state),"
                + " attempts = VALUES(attempts), output = VALUES(output), error = VALUES(error),"
                + " started_at = VALUES(started_at), finished_at = VALUES(finished_at)";
    }

    @Override
    public String upsertCompensationSql(Tables t) {
        return "INSERT INTO " + t.step() + " (task_id, step_index, step_name, compensation_state, error, state,"
                + " attempts) VALUES (?, ?, ?, ?, ?, 'COMPLETED', 0)"
                + " ON DUPLICATE KEY UPDATE step_name = VALUES(step_name),"
                + " compensation_state = VALUES(compensation_state), error = VALUES(error)";
    }
}
