package dev.sas.jdbc.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.TaskChange;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.TaskSnapshot;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * How the store applies a decision of {@link TaskDecisions}: the columns it reads as a
 * {@link TaskSnapshot}, and the write of a {@link TaskChange} fenced on what it read (task id,
 * lease, state and holder unchanged), so a row that moved on meanwhile is left alone and its update
 * count says so. The SQL names no state: the states come from the decision, as parameters.
 * Stateless.
 */
final class TaskChanges {

    /** The task columns {@link #read} reads, in order. */
    static final String SNAPSHOT_COLUMNS = "task_id, lease, state, locked_by, next_attempt_at, attempt,"
            + " failure_count, cancel_requested, created_at";

    private TaskChanges() {
    }

    /** A task row as read: its fence (id, lease, holder) and the snapshot a decision takes. */
    record Read(String taskId, long lease, String lockedBy, TaskSnapshot snapshot) {
    }

    /** A decided change of the row read as {@code from}. */
    record Write(Read from, TaskChange change) {
    }

    /** The row read from {@link #SNAPSHOT_COLUMNS} at column {@code from} on. */
    static Read read(ResultSet rs, int from) throws SQLException {
        String lockedBy = rs.getString(from + 3);
        long due = rs.getLong(from + 4);
        Instant dueAt = rs.wasNull() ? null : Instant.ofEpochMilli(due);
        TaskSnapshot s = new TaskSnapshot(TaskStatus.valueOf(rs.getString(from + 2)), lockedBy != null, dueAt,
                rs.getInt(from + 5), rs.getInt(from + 6),
                rs.getBoolean(from + 7), Instant.ofEpochMilli(rs.getLong(from + 8)));
        return new Read(rs.getString(from), rs.getLong(from + 1), lockedBy, s);
    }

    /**
     * Applies {@code writes} (one statement per shape of change, each a batch in list order) and
     * returns, per write, whether it changed its row.
     *
     * @param clearPendingStart also clear the start event a claim left pending in the row (the
     *     caller has read it and writes it before its own event, see {@link EventRows})
     */
    static boolean[] apply(Handle h, Tables t, List<Write> writes, long nowMs, boolean clearPendingStart) {
        Map<String, List<Integer>> byShape = new LinkedHashMap<>();
        for (int i = 0; i < writes.size(); i++) {
            byShape.computeIfAbsent(updateSql(t, writes.get(i), clearPendingStart), k -> new ArrayList<>()).add(i);
        }
        boolean[] changed = new boolean[writes.size()];
        for (Map.Entry<String, List<Integer>> shape : byShape.entrySet()) {
            PreparedBatch batch = h.prepareBatch(shape.getKey());
            for (int i : shape.getValue()) {
                bind(batch, writes.get(i), nowMs);
                batch.add();
            }
            int[] counts = batch.execute();
            for (int k = 0; k < counts.length; k++) {
                if (counts[k] == Statement.SUCCESS_NO_INFO) {
                    throw new StateStoreException("the JDBC driver reported no update counts for a batch; the store"
                            + " needs them to tell which tasks changed (MariaDB: do not set useBulkStmts=true)");
                }
                changed[shape.getValue().get(k)] = counts[k] > 0;
            }
        }
        return changed;
    }

    private static String updateSql(Tables t, Write w, boolean clearPendingStart) {
        TaskChange c = w.change();
        return "UPDATE " + t.task() + " SET state = ?, next_attempt_at = ?, attempt = ?, failure_count = ?,"
                + " cancel_requested = ?, updated_at = ?"
                + (c.releaseHolder() ? ", locked_by = NULL, complete_by = NULL" : "")
                + (c.lastError() != null ? ", last_error = ?" : "")
                + (clearPendingStart ? ", " + EventRows.CLEAR_PENDING_START : "")
                + " WHERE task_id = ? AND lease = ? AND state = ? AND locked_by "
                + (w.from().lockedBy() == null ? "IS NULL" : "= ?");
    }

    private static void bind(PreparedBatch b, Write w, long nowMs) {
        TaskChange c = w.change();
        int i = 0;
        b.bind(i++, c.status().name()).bind(i++, Rows.millisOrNull(c.nextAttemptAt())).bind(i++, c.attempt())
                .bind(i++, c.failureCount()).bind(i++, c.cancelRequested()).bind(i++, nowMs);
        if (c.lastError() != null) {
            b.bind(i++, c.lastError());
        }
        Read r = w.from();
        b.bind(i++, r.taskId()).bind(i++, r.lease()).bind(i++, r.snapshot().status().name());
        if (r.lockedBy() != null) {
            b.bind(i, r.lockedBy());
        }
    }
}
