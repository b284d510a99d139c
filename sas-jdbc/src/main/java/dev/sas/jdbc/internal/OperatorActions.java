package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jdbi.v3.core.statement.Update;

/**
 * Resubmit and cancel: a conditional update and its event in one transaction. Jdbi, except the
 * event, which goes through the write path's shared event writer. Thread-safe.
 */
final class OperatorActions {

    private final StoreContext db;

    OperatorActions(StoreContext db) {
        this.db = db;
    }

    /** See {@code StateStore.resubmit}. */
    boolean resubmit(TaskId taskId, Instant now, TaskEvent event) {
        long nowMs = now.toEpochMilli();
        return updateThenRecord("resubmit", taskId, event, "UPDATE " + db.t().task()
                + " SET failure_count = 0, attempt = 0, next_attempt_at = ?, updated_at = ?,"
                + " state = CASE WHEN state = 'ERROR' THEN 'PENDING' ELSE 'COMPENSATING' END"
                + " WHERE task_id = ? AND state IN ('ERROR','COMPENSATION_FAILED')", nowMs, nowMs, taskId.value());
        // (an ERROR or COMPENSATION_FAILED task has no pending start: the transition that left it there wrote it)
    }

    /** See {@code StateStore.requestCancel}. */
    boolean requestCancel(TaskId taskId, Instant now, TaskEvent event) {
        long nowMs = now.toEpochMilli();
        // state is assigned last: MySQL evaluates SET assignments left to right on the new values.
        // attempt is kept: it tells the scheduler whether an ERROR task's failed step may have applied.
        // A WAITING task is made due: its cancel does not wait for the agent. So is an unclaimed
        // PENDING task waiting for its delay or its retry time: its cancel does not wait for that time.
        // An AWAITING_REPLY task has no claim to wait for: released and due now, a scheduler compensates it.
        return updateThenRecord("requestCancel", taskId, event, "UPDATE " + db.t().task()
                + " SET cancel_requested = TRUE, updated_at = ?, pending_start_at = NULL,"
                + " next_attempt_at = CASE WHEN state IN ('ERROR','WAITING','AWAITING_REPLY')"
                + " OR (state = 'PENDING' AND locked_by IS NULL AND next_attempt_at > ?) THEN ?"
                + " ELSE next_attempt_at END,"
                + " failure_count = CASE WHEN state = 'ERROR' THEN 0 ELSE failure_count END,"
                + " locked_by = CASE WHEN state = 'AWAITING_REPLY' THEN NULL ELSE locked_by END,"
                + " complete_by = CASE WHEN state = 'AWAITING_REPLY' THEN NULL ELSE complete_by END,"
                + " state = CASE WHEN state IN ('ERROR','AWAITING_REPLY') THEN 'PENDING' ELSE state END"
                + " WHERE task_id = ? AND (state = 'ERROR' OR (cancel_requested = FALSE AND state IN"
                + " ('PENDING','WAITING','PARKED','PROCESSING','AWAITING_REPLY','COMPENSATING')))",
                nowMs, nowMs, nowMs, taskId.value());
    }

    /**
     * Runs a conditional update ({@code sql}, which clears {@code pending_start_at} where the row can
     * have one) and, in the same transaction, records {@code event} if it changed a row: after the start event a claim
     * left pending in the row (see {@link EventRows}), which it so writes in its place in the order.
     */
    private boolean updateThenRecord(String operation, TaskId taskId, TaskEvent event, String sql, Object... args) {
        return db.run(operation, taskId, () -> db.jdbi().inTransaction(h -> {
            // locked first, so that the pending start read here is the one the update clears
            Optional<Object[]> row = h.createQuery("SELECT reply_to, " + EventRows.PENDING_START_COLUMNS + " FROM "
                            + db.t().task() + " WHERE task_id = ? FOR UPDATE")
                    .bind(0, taskId.value())
                    .map((rs, ctx) -> new Object[] {rs.getString(1), EventRows.pendingStart(taskId, rs, 2)})
                    .findOne();
            if (row.isEmpty()) {
                return false;
            }
            Update update = h.createUpdate(sql);
            for (int i = 0; i < args.length; i++) {
                update.bind(i, args[i]);
            }
            if (update.execute() == 0) {
                return false;
            }
            String replyTo = (String) row.get()[0];
            db.onConnection(h, operation + " recording its event", c -> EventRows.insertRows(c, db.t(),
                    EventRows.packAfter((TaskEvent) row.get()[1], List.of(event))));
            db.recordReplies(h, List.of(event), replyTo == null ? Map.of() : Map.of(taskId, replyTo));
            return true;
        }));
    }
}
