package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.TaskChange;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.VersionMove;
import dev.sas.core.spi.VersionMoves;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * {@link VersionMoves}: the task row and its step rows' names read under the row's lock, the change
 * {@link TaskDecisions#moveVersion} decides written fenced on what was read ({@link TaskChanges}),
 * then the new version and current step, the step rows re-indexed, and the event, in one
 * transaction. The SQL names no state. Thread-safe.
 */
final class VersionMoveWriter implements VersionMoves {

    private static final String COLUMNS = TaskChanges.SNAPSHOT_COLUMNS + ", reply_to, " + EventRows.PENDING_START_COLUMNS
            + ", workflow_version";

    private final StoreContext db;

    VersionMoveWriter(StoreContext db) {
        this.db = db;
    }

    /** The locked row: fence and snapshot, status channel, pending start, and what the plan needs. */
    private record Locked(TaskChanges.Read read, String statusChannel, TaskEvent pendingStart, String businessKey,
            String workflow, String stepName, int version) {
    }

    @Override
    public VersionMove.Result move(VersionMove move, Instant now) {
        TaskId taskId = move.taskId();
        return db.run("moveVersion", taskId, () -> db.jdbi().inTransaction(h -> {
            // PENDING_START_COLUMNS: business_key, workflow, state, current_step, current_step_name, attempt, pending_start_at
            Optional<Locked> row = h.createQuery("SELECT " + COLUMNS + " FROM " + db.t().task()
                            + " WHERE task_id = ? FOR UPDATE")
                    .bind(0, taskId.value())
                    .map((rs, ctx) -> new Locked(TaskChanges.read(rs, 1), rs.getString(10),
                            EventRows.pendingStart(taskId, rs, 11), rs.getString(11), rs.getString(12),
                            rs.getString(15), rs.getInt(18)))
                    .findOne();
            if (row.isEmpty()) {
                return new VersionMove.Result(VersionMove.Kind.NOT_FOUND, null, 0, null, null);
            }
            Locked r = row.get();
            Map<Integer, String> steps = new TreeMap<>();
            h.createQuery("SELECT step_index, step_name FROM " + db.t().step() + " WHERE task_id = ?")
                    .bind(0, taskId.value())
                    .map((rs, ctx) -> new Object[] {rs.getInt(1), rs.getString(2)})
                    .forEach(s -> steps.put((Integer) s[0], (String) s[1]));
            VersionMove.Plan plan = move.plan(r.stepName(), steps);
            Optional<TaskChange> change = TaskDecisions.moveVersion(r.read().snapshot(), now);
            VersionMove.Kind refused = r.version() != move.fromVersion() ? VersionMove.Kind.OTHER_VERSION
                    : change.isEmpty() ? VersionMove.Kind.NOT_MOVABLE
                    : !plan.complete() ? VersionMove.Kind.UNMAPPED_STEP : null;
            if (refused != null) {
                return new VersionMove.Result(refused, r.read().snapshot().status(), r.version(), plan.unmapped(),
                        null);
            }
            boolean[] changed = TaskChanges.apply(h, db.t(),
                    List.of(new TaskChanges.Write(r.read(), change.get())), now.toEpochMilli(), true);
            if (!changed[0]) {
                // under the row lock the fence holds; a miss means the row changed anyway: nothing moved
                return new VersionMove.Result(VersionMove.Kind.NOT_MOVABLE, r.read().snapshot().status(), r.version(),
                        null, null);
            }
            VersionMove.Target to = plan.current();
            // the lease moves on too: a write decided from the row before the move (a park of the old
            // version's due tasks, a wake-up) is fenced on it and changes nothing
            h.createUpdate("UPDATE " + db.t().task() + " SET workflow_version = ?, current_step = ?,"
                            + " current_step_name = ?, step_timeout_ms = ?, lease = lease + 1 WHERE task_id = ?")
                    .bind(0, move.toVersion()).bind(1, to.index()).bind(2, to.name())
                    .bind(3, to.timeout().toMillis()).bind(4, taskId.value())
                    .execute();
            reindexSteps(h, taskId, plan.rows());
            TaskEvent event = move.event(r.businessKey(), r.workflow(), r.stepName(), to, now);
            db.onConnection(h, "moveVersion recording its event",
                    c -> EventRows.insertAfter(c, db.t(), r.pendingStart(), List.of(event)));
            db.recordStatusUpdates(h, List.of(event), r.statusChannel() == null ? Map.of() : Map.of(taskId, r.statusChannel()));
            return new VersionMove.Result(VersionMove.Kind.MOVED, change.get().status(), move.toVersion(), null, event);
        }));
    }

    /**
     * Gives each step row its new index and name: first to {@code -1 - index} (free, as no index is
     * negative), then to the index, so that two rows that swap places never meet in the key.
     */
    private void reindexSteps(Handle h, TaskId taskId, Map<Integer, VersionMove.Target> rows) {
        if (rows.isEmpty()) {
            return;
        }
        PreparedBatch batch = h.prepareBatch("UPDATE " + db.t().step()
                + " SET step_index = ?, step_name = ? WHERE task_id = ? AND step_index = ?");
        rows.forEach((from, to) -> batch.bind(0, -1 - to.index()).bind(1, to.name()).bind(2, taskId.value())
                .bind(3, from).add());
        batch.execute();
        h.createUpdate("UPDATE " + db.t().step() + " SET step_index = -1 - step_index WHERE task_id = ?"
                        + " AND step_index < 0")
                .bind(0, taskId.value())
                .execute();
    }
}
