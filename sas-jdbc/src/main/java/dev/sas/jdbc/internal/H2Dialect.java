package dev.sas.jdbc.internal;

import dev.sas.core.spi.WorkflowVersion;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.Query;

/**
 * H2 2.x. Measured: {@code SELECT … FOR UPDATE [SKIP LOCKED]} with a limit locks every matching
 * row, and {@code FROM FINAL TABLE (UPDATE …)} can return rows it did not update. So the claim is a
 * conditional {@code UPDATE} (H2 re-checks the condition on a row another transaction changed)
 * that stamps a unique claim token, followed by a select by that token.
 */
final class H2Dialect implements Dialect {

    @Override
    public String currentEpochSecondsSql() {
        return "SELECT EXTRACT(EPOCH FROM CURRENT_TIMESTAMP(6))";
    }

    @Override
    public String name() {
        return "h2";
    }

    @Override
    public String lockUnlessLockedSql(Tables t, int rows) {
        return null; // H2 2.x has no SKIP LOCKED; an in-process database has no frozen peer holding rows
    }

    @Override
    public String describe(Timeouts timeouts) {
        // Embedded: no network time-outs, and no QUERY_TIMEOUT: measured, with it H2 reports concurrent claim and write
        // transactions as deadlocked (40001) instead of waiting for the row lock (LOCK_TIMEOUT).
        return "none (H2: LOCK_TIMEOUT of the URL applies)";
    }

    @Override
    public String latestCommittedReadSuffix() {
        return "";
    }

    @Override
    public List<ClaimRow> claim(Handle h, Tables t, String instanceId, int limit, long now,
            List<WorkflowVersion> runnable) {
        String claimable = "locked_by IS NULL AND state IN " + CLAIMABLE_STATES + " AND next_attempt_at <= ?";
        // Candidates first (a cheap index read, one state at a time so that the index
        // (state, priority DESC, next_attempt_at) returns them in claim order), then a conditional
        // update by primary key: an UPDATE ... WHERE task_id IN (subquery) cost ~30 ms per 64 rows
        // on H2. The update re-checks that each row is still claimable, so a row another claimer
        // took in between is skipped, and still of a runnable version: an operator may have moved
        // the task to another version in between.
        List<Candidate> found = new ArrayList<>();
        for (String state : CLAIMABLE_STATE_LIST) {
            Query select = h.createQuery(claimCandidatesSql(t, runnable.size()));
            select.bind(0, state).bind(1, now);
            select.bind(Dialect.bindRunnable(select, 2, runnable), limit);
            found.addAll(select.map((rs, ctx) -> new Candidate(rs.getString(1), rs.getInt(2), rs.getLong(3))).list());
        }
        if (found.isEmpty()) {
            return List.of();
        }
        found.sort(Comparator.comparingInt(Candidate::priority).reversed().thenComparingLong(Candidate::due));
        List<String> candidates = found.stream().limit(limit).map(Candidate::taskId).toList();
        String token = UUID.randomUUID().toString();
        org.jdbi.v3.core.statement.Update update = h.createUpdate("UPDATE " + t.task()
                + " SET locked_by = ?, claim_token = ?, lease = lease + 1,"
                + " attempt = attempt + 1, complete_by = ? + step_timeout_ms, updated_at = ?,"
                + " " + EventRows.claimSetsPendingStart("cancel_requested", "state") + ","
                + " state = " + Dialect.claimedState("state")
                + " WHERE task_id IN (" + Dialect.placeholders(candidates.size()) + ") AND " + claimable
                + " AND " + Dialect.runnableFilter(runnable.size()))
                .bind(0, instanceId).bind(1, token).bind(2, now).bind(3, now)
                .bind(4, EventRows.claimPendingStartAt(now));
        int next = 5;
        for (String id : candidates) {
            update.bind(next++, id);
        }
        update.bind(next++, now);
        Dialect.bindRunnable(update, next, runnable);
        if (update.execute() == 0) {
            return List.of();
        }
        // by primary key: claim_token has no index (schema 12); the token tells the rows this
        // update claimed from candidates another claimer took in between
        Query claimed = h.createQuery("SELECT " + ClaimRow.COLUMNS + " FROM " + t.task() + " WHERE task_id IN ("
                + Dialect.placeholders(candidates.size()) + ") AND claim_token = ?");
        int k = 0;
        for (String id : candidates) {
            claimed.bind(k++, id);
        }
        return claimed.bind(k, token)
                .map((rs, ctx) -> ClaimRow.map(rs))
                .list();
    }

    /** The claim's candidate select for one state (state, now, the runnable versions, limit). */
    static String claimCandidatesSql(Tables t, int runnableVersions) {
        // The hint: with the workflow filter, H2 otherwise picks the business key index (workflow
        // first) and sorts every due row of the workflow.
        return "SELECT task_id, priority, next_attempt_at FROM " + t.task() + " USE INDEX (" + t.prefix()
                + "task_claim_order_idx) WHERE state = ? AND locked_by IS NULL AND next_attempt_at <= ? AND "
                + Dialect.runnableFilter(runnableVersions)
                // state leads the ORDER BY although it is fixed: H2 reads the index in order only when
                // the ORDER BY starts with the index's first column
                + " ORDER BY state, priority DESC, next_attempt_at FETCH FIRST ? ROWS ONLY";
    }

    private record Candidate(String taskId, int priority, long due) {
    }

    @Override
    public String wakeWaitingCandidatesSql(Tables t, int steps) {
        // the claim's hint: otherwise H2 reads the business key index (workflow first)
        return "SELECT " + TaskChanges.SNAPSHOT_COLUMNS + " FROM " + t.task() + " USE INDEX (" + t.prefix()
                + "task_claim_order_idx) WHERE " + ScanPredicates.WAITING_NOT_DUE_STATE_FIRST
                + " AND (workflow, workflow_version, current_step) IN (" + Dialect.valueRows(steps, 3) + ")"
                + " ORDER BY state, priority DESC, next_attempt_at FETCH FIRST ? ROWS ONLY";
    }

    @Override
    public boolean claimRecordsStatusUpdates() {
        return false;
    }

    @Override
    public String upsertStepSql(Tables t, int rows) {
        return "MERGE INTO " + t.step() + " (task_id, step_index, step_name, state, attempts, output, error,"
                + " started_at, finished_at) KEY (task_id, step_index) VALUES " + Dialect.valueRows(rows, 9);
    }

    @Override
    public String upsertCompensationSql(Tables t) {
        return "MERGE INTO " + t.step() + " s USING (SELECT CAST(? AS VARCHAR(64)) AS task_id,"
                + " CAST(? AS INT) AS step_index, CAST(? AS VARCHAR(200)) AS step_name,"
                + " CAST(? AS VARCHAR(32)) AS compensation_state, CAST(? AS CHARACTER LARGE OBJECT) AS error) v"
                + " ON s.task_id = v.task_id AND s.step_index = v.step_index"
                + " WHEN MATCHED THEN UPDATE SET step_name = v.step_name,"
                + " compensation_state = v.compensation_state, error = v.error"
                + " WHEN NOT MATCHED THEN INSERT (task_id, step_index, step_name, state, attempts,"
                + " compensation_state, error) VALUES (v.task_id, v.step_index, v.step_name, 'COMPLETED', 0,"
                + " v.compensation_state, v.error)";
    }
}
