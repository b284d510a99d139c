package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.TaskChange;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.TaskSnapshot;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * Resubmit and cancel: the task row read under its lock, the change {@link TaskDecisions} decides
 * for it written fenced on what was read ({@link TaskChanges}), and its event, in one transaction.
 * Jdbi, except the event, which goes through the write path's shared event writer. Thread-safe.
 */
final class OperatorActions {

    private final StoreContext db;

    OperatorActions(StoreContext db) {
        this.db = db;
    }

    /** See {@code StateStore.resubmit}. */
    boolean resubmit(TaskId taskId, Instant now, TaskEvent event) {
        return decideThenRecord("resubmit", taskId, now, event, TaskDecisions::resubmit);
    }

    /** See {@code StateStore.requestCancel}. */
    boolean requestCancel(TaskId taskId, Instant now, TaskEvent event) {
        return decideThenRecord("requestCancel", taskId, now, event, TaskDecisions::requestCancel);
    }

    /** A locked row with what a decision and the event need. */
    private record Locked(TaskChanges.Read read, String statusChannel, TaskEvent pendingStart) {
    }

    /**
     * Reads the task row under its lock, applies the change {@code decision} makes of it (clearing
     * the start event a claim left pending in the row) and, in the same transaction, records
     * {@code event} if it changed the row: after that pending start (see {@link EventRows}), which it
     * so writes in its place in the order.
     */
    private boolean decideThenRecord(String operation, TaskId taskId, Instant now, TaskEvent event,
            BiFunction<TaskSnapshot, Instant, Optional<TaskChange>> decision) {
        return db.run(operation, taskId, () -> db.jdbi().inTransaction(h -> {
            Optional<Locked> row = h.createQuery("SELECT " + TaskChanges.SNAPSHOT_COLUMNS + ", reply_to, "
                            + EventRows.PENDING_START_COLUMNS + " FROM " + db.t().task() + " WHERE task_id = ? FOR UPDATE")
                    .bind(0, taskId.value())
                    .map((rs, ctx) -> new Locked(TaskChanges.read(rs, 1), rs.getString(10),
                            EventRows.pendingStart(taskId, rs, 11)))
                    .findOne();
            if (row.isEmpty()) {
                return false;
            }
            Optional<TaskChange> change = decision.apply(row.get().read().snapshot(), now);
            if (change.isEmpty()) {
                return false;
            }
            boolean[] changed = TaskChanges.apply(h, db.t(),
                    List.of(new TaskChanges.Write(row.get().read(), change.get())), now.toEpochMilli(), true);
            if (!changed[0]) {
                return false;
            }
            String statusChannel = row.get().statusChannel();
            db.onConnection(h, operation + " recording its event",
                    c -> EventRows.insertAfter(c, db.t(), row.get().pendingStart(), List.of(event)));
            db.recordStatusUpdates(h, List.of(event), statusChannel == null ? Map.of() : Map.of(taskId, statusChannel));
            return true;
        }));
    }
}
