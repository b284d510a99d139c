package dev.sas.jdbc.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.WorkflowVersion;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.Query;

/**
 * Parking tasks no live runtime can run, and making them due again: a bounded read of candidate
 * rows through an index, then one conditional update per row in a batch (its update count says
 * whether that row was still as read) and the events of the rows changed, all in one transaction.
 * Jdbi; the supervisor calls it rarely. Thread-safe.
 */
final class Parking {

    private static final String CANDIDATE_COLUMNS = "task_id, business_key, workflow, current_step,"
            + " current_step_name, reply_to, lease";

    private final StoreContext db;

    Parking(StoreContext db) {
        this.db = db;
    }

    /** A row read as a candidate. */
    private record Candidate(String taskId, String businessKey, String workflow, int step, String stepName,
            String replyTo, long lease) {
    }

    /** See {@code StateStore.park}. */
    List<RecordedEvent> park(WorkflowVersion version, Instant dueBefore, Instant now, String reason, int limit) {
        Objects.requireNonNull(version, "version must not be null");
        Objects.requireNonNull(dueBefore, "dueBefore must not be null");
        Objects.requireNonNull(reason, "reason must not be null");
        long nowMs = now.toEpochMilli();
        if (limit <= 0) {
            return List.of();
        }
        return db.run("park of " + version, null, () -> db.jdbi().inTransaction(h -> {
            boolean advertised = h.createQuery("SELECT COUNT(*) FROM " + db.t().runtimeWorkflow()
                            + " WHERE workflow = ? AND workflow_version = ? AND expires_at > ?")
                    .bind(0, version.workflow()).bind(1, version.version()).bind(2, nowMs)
                    .mapTo(Long.class).one() > 0;
            if (advertised) {
                return List.<RecordedEvent>of();
            }
            // the claim's predicate first, so the claim index serves it (partial on PostgreSQL)
            List<Candidate> rows = candidates(h, "locked_by IS NULL AND state IN " + Dialect.CLAIMABLE_STATES
                    + " AND state = 'PENDING' AND next_attempt_at <= ? AND workflow = ? AND workflow_version = ?",
                    limit, dueBefore.toEpochMilli(), version.workflow(), version.version());
            // unchanged lease and still unclaimed PENDING: a task claimed (or parked) meanwhile is left alone
            return change(h, rows, "UPDATE " + db.t().task() + " SET state = 'PARKED', last_error = ?, updated_at = ?"
                    + " WHERE task_id = ? AND lease = ? AND locked_by IS NULL AND state = 'PENDING'",
                    c -> new Object[] {reason, nowMs, c.taskId(), c.lease()}, TaskEvent.Type.PARKED, now, reason);
        }));
    }

    /** See {@code StateStore.unpark}. */
    List<RecordedEvent> unpark(Set<WorkflowVersion> versions, Instant now, String message, int limit) {
        Objects.requireNonNull(versions, "versions must not be null");
        Objects.requireNonNull(message, "message must not be null");
        long nowMs = now.toEpochMilli();
        if (limit <= 0 || versions.isEmpty()) {
            return List.of();
        }
        List<WorkflowVersion> ordered = versions.stream()
                .sorted(Comparator.comparing(WorkflowVersion::workflow).thenComparingInt(WorkflowVersion::version))
                .toList();
        return db.run("unpark", null, () -> db.jdbi().inTransaction(h -> {
            // one probe of the parked index per version: parked tasks of other versions are never read
            List<Candidate> rows = new ArrayList<>();
            for (WorkflowVersion v : ordered) {
                if (rows.size() >= limit) {
                    break;
                }
                rows.addAll(candidates(h, "state = 'PARKED' AND workflow = ? AND workflow_version = ?",
                        limit - rows.size(), v.workflow(), v.version()));
            }
            return change(h, rows, "UPDATE " + db.t().task() + " SET state = 'PENDING', next_attempt_at = ?,"
                    + " updated_at = ? WHERE task_id = ? AND state = 'PARKED'",
                    c -> new Object[] {nowMs, nowMs, c.taskId()}, TaskEvent.Type.UNPARKED, now, message);
        }));
    }

    private List<Candidate> candidates(Handle h, String where, int limit, Object... args) {
        Query q = h.createQuery("SELECT " + CANDIDATE_COLUMNS + " FROM " + db.t().task() + " WHERE " + where
                + " LIMIT ?");
        int i = 0;
        for (Object a : args) {
            q.bind(i++, a);
        }
        return q.bind(i, limit)
                .map((rs, ctx) -> new Candidate(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4),
                        rs.getString(5), rs.getString(6), rs.getLong(7)))
                .list();
    }

    /** Runs {@code update} once per row (in task-id order) and records an event for each row it changed. */
    private List<RecordedEvent> change(Handle h, List<Candidate> rows, String update,
            Function<Candidate, Object[]> args, TaskEvent.Type type, Instant now, String message) {
        if (rows.isEmpty()) {
            return List.of();
        }
        List<Candidate> sorted = rows.stream().sorted(Comparator.comparing(Candidate::taskId)).toList();
        PreparedBatch batch = h.prepareBatch(update);
        for (Candidate c : sorted) {
            Object[] values = args.apply(c);
            for (int i = 0; i < values.length; i++) {
                batch.bind(i, values[i]);
            }
            batch.add();
        }
        int[] counts = batch.execute();
        List<RecordedEvent> out = new ArrayList<>();
        for (int k = 0; k < sorted.size(); k++) {
            if (counts[k] == Statement.SUCCESS_NO_INFO) {
                throw new StateStoreException("the JDBC driver reported no update counts for a batch;"
                        + " the store needs them to tell which tasks changed (MariaDB: do not set useBulkStmts=true)");
            }
            if (counts[k] > 0) {
                Candidate c = sorted.get(k);
                out.add(new RecordedEvent(new TaskEvent(TaskId.of(c.taskId()), c.businessKey(), c.workflow(), type,
                        c.step(), c.stepName(), 0, now, message), c.replyTo()));
            }
        }
        if (!out.isEmpty()) {
            Map<TaskId, String> replyTo = new HashMap<>();
            for (RecordedEvent e : out) {
                if (e.replyTo() != null) {
                    replyTo.put(e.event().taskId(), e.replyTo());
                }
            }
            db.recordEvents(h, out.stream().map(RecordedEvent::event).toList(), replyTo);
        }
        return out;
    }
}
