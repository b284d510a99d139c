package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.TaskChange;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.TaskSnapshot;
import dev.sas.core.spi.WorkflowVersion;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.Query;

/**
 * Parking tasks no live runtime can run, and making them due again: a bounded read of candidate
 * rows through an index, the change {@link TaskDecisions} decides for each, written fenced on the
 * row read in a batch (its update count says whether that row was still as read), and the events
 * of the rows changed, all in one transaction.
 * Jdbi; the supervisor calls it rarely. Thread-safe.
 */
final class Parking {

    private static final String CANDIDATE_COLUMNS = TaskChanges.SNAPSHOT_COLUMNS
            + ", business_key, workflow, current_step, current_step_name, reply_to";

    private final StoreContext db;

    Parking(StoreContext db) {
        this.db = db;
    }

    /** A row read as a candidate. */
    private record Candidate(TaskChanges.Read read, String businessKey, String workflow, int step, String stepName,
            String statusChannel) {

        String taskId() {
            return read.taskId();
        }
    }

    /** See {@code DeploymentStore.park}. */
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
            List<Candidate> rows = candidates(h, ScanPredicates.DUE_PENDING + " AND workflow = ? AND workflow_version = ?",
                    limit, dueBefore.toEpochMilli(), version.workflow(), version.version());
            // fenced on the row read: a task claimed (or parked) meanwhile is left alone
            return change(h, rows, s -> TaskDecisions.park(s, reason), TaskEvent.Type.PARKED, now, reason);
        }));
    }

    /** See {@code DeploymentStore.unpark}. */
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
                rows.addAll(candidates(h, ScanPredicates.PARKED + " AND workflow = ? AND workflow_version = ?",
                        limit - rows.size(), v.workflow(), v.version()));
            }
            return change(h, rows, s -> TaskDecisions.unpark(s, now), TaskEvent.Type.UNPARKED, now, message);
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
                .map((rs, ctx) -> new Candidate(TaskChanges.read(rs, 1), rs.getString(10), rs.getString(11),
                        rs.getInt(12), rs.getString(13), rs.getString(14)))
                .list();
    }

    /**
     * Decides each row (in task-id order), writes the changes fenced on the rows read and records an
     * event for each row changed.
     */
    private List<RecordedEvent> change(Handle h, List<Candidate> rows,
            Function<TaskSnapshot, Optional<TaskChange>> decision, TaskEvent.Type type, Instant now, String message) {
        List<Candidate> sorted = new ArrayList<>();
        List<TaskChanges.Write> writes = new ArrayList<>();
        for (Candidate c : rows.stream().sorted(Comparator.comparing(Candidate::taskId)).toList()) {
            decision.apply(c.read().snapshot()).ifPresent(change -> {
                sorted.add(c);
                writes.add(new TaskChanges.Write(c.read(), change));
            });
        }
        boolean[] changed = TaskChanges.apply(h, db.t(), writes, now.toEpochMilli(), false);
        List<RecordedEvent> out = new ArrayList<>();
        for (int k = 0; k < sorted.size(); k++) {
            if (changed[k]) {
                Candidate c = sorted.get(k);
                out.add(new RecordedEvent(new TaskEvent(TaskId.of(c.taskId()), c.businessKey(), c.workflow(), type,
                        c.step(), c.stepName(), 0, now, message), c.statusChannel()));
            }
        }
        if (!out.isEmpty()) {
            Map<TaskId, String> statusChannel = new HashMap<>();
            for (RecordedEvent e : out) {
                if (e.statusChannel() != null) {
                    statusChannel.put(e.event().taskId(), e.statusChannel());
                }
            }
            db.recordEvents(h, out.stream().map(RecordedEvent::event).toList(), statusChannel);
        }
        return out;
    }
}
