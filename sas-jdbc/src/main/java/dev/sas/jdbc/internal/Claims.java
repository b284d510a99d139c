package dev.sas.jdbc.internal;

import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.WorkflowVersion;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.statement.Query;

/**
 * The claim: the dialect's locking statement(s), which leave the start events pending in the task
 * rows (see {@link EventRows}), their copies in status channels' outboxes where the dialect does not
 * write them itself, and the outputs of the steps a claimed task already completed (and the steps it skipped). Jdbi, because
 * {@link Dialect#claim} is written against a Jdbi handle. Thread-safe.
 */
final class Claims {

    /** Tries of a claim transaction that the database chose as a deadlock victim. */
    private static final int CLAIM_ATTEMPTS = 3;

    private final StoreContext db;
    private final PendingStarts pendingStarts;

    Claims(StoreContext db, PendingStarts pendingStarts) {
        this.db = db;
        this.pendingStarts = pendingStarts;
    }

    /** See {@code StateStore.claim}. */
    List<ClaimedTask> claim(String instanceId, int limit, Instant now, Set<WorkflowVersion> runnable) {
        Objects.requireNonNull(runnable, "runnable must not be null");
        if (limit <= 0 || runnable.isEmpty()) {
            return List.of();
        }
        // a stable order: the statement text, and so its cached plan, stays the same per set
        List<WorkflowVersion> versions = runnable.stream()
                .sorted(Comparator.comparing(WorkflowVersion::workflow).thenComparingInt(WorkflowVersion::version))
                .toList();
        long nowMs = now.toEpochMilli();
        return db.run("claim by " + instanceId, null, () -> {
            if (db.dialect().claimRecordsStatusUpdates() && !EventRows.claimWritesStarts()) {
                // one statement claims and records the replies' start events: no transaction round trips
                // needed, and the outputs of tasks this instance now holds cannot change under it
                return db.jdbi().withHandle(h -> claimIn(h, instanceId, limit, nowMs, versions));
            }
            // MariaDB's SELECT … FOR UPDATE SKIP LOCKED can still deadlock with a concurrent claim
            // or write on index locks; the transaction was rolled back, so running it again is safe
            for (int attempt = 1; ; attempt++) {
                try {
                    return db.jdbi().inTransaction(h -> claimIn(h, instanceId, limit, nowMs, versions));
                } catch (JdbiException e) {
                    if (attempt == CLAIM_ATTEMPTS || !isDeadlock(e)) {
                        throw e;
                    }
                }
            }
        });
    }

    /** True if the database rolled the transaction back as a deadlock victim or serialization failure. */
    static boolean isDeadlock(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof SQLException s && ("40001".equals(s.getSQLState()) || "40P01".equals(s.getSQLState()))) {
                return true;
            }
        }
        return false;
    }

    private List<ClaimedTask> claimIn(Handle h, String instanceId, int limit, long nowMs,
            List<WorkflowVersion> runnable) {
        List<ClaimRow> rows = new ArrayList<>(db.dialect().claim(h, db.t(), instanceId, limit, nowMs, runnable));
        if (rows.isEmpty()) {
            return List.of();
        }
        rows.sort(ClaimRow.ORDER);
        // the start events stay pending in the task rows (unless the claim writes them); only a
        // status channel hears of them now
        List<TaskEvent> replies = new ArrayList<>();
        List<TaskEvent> written = new ArrayList<>();
        Map<TaskId, String> statusChannel = new HashMap<>();
        for (ClaimRow r : rows) {
            TaskId id = TaskId.of(r.taskId());
            // a task whose cancel was requested is not started by its claim ({@link Dialect#claimedStart})
            TaskEvent start = r.cancelRequested() && r.status() != TaskStatus.COMPENSATING ? null
                    : EventRows.started(id, r.businessKey(), r.workflow(), r.status(), r.currentStep(),
                            r.currentStepName(), r.attempt(), nowMs);
            boolean writeNow = start != null && EventRows.claimWritesStarts();
            if (writeNow) {
                written.add(start);
            }
            pendingStarts.claimed(r.taskId(), r.lease(), writeNow ? null : start);
            if (start != null && r.statusChannel() != null && !db.dialect().claimRecordsStatusUpdates()) {
                statusChannel.put(id, r.statusChannel());
                replies.add(start);
            }
        }
        if (!written.isEmpty()) {
            db.onConnection(h, "recording " + written.size() + " start event(s)",
                    c -> EventRows.insert(c, db.t(), written, db.dialect().bindsArrays()));
        }
        if (!replies.isEmpty()) {
            db.recordStatusUpdates(h, replies, statusChannel);
        }
        Map<String, StepsSoFar> steps = loadSteps(h, rows);
        List<ClaimedTask> out = new ArrayList<>(rows.size());
        for (ClaimRow r : rows) {
            StepsSoFar so = steps.getOrDefault(r.taskId(), StepsSoFar.NONE);
            out.add(RowMapper.claimedTask(r, so.outputs(), so.skipped()));
        }
        return out;
    }

    /**
     * What a claimed task's steps left: the outputs of completed steps and of a waiting timer (its
     * fire time), and the steps skipped.
     */
    private record StepsSoFar(List<String> outputs, List<Integer> skipped) {
        static final StepsSoFar NONE = new StepsSoFar(List.of(), List.of());
    }

    private Map<String, StepsSoFar> loadSteps(Handle h, List<ClaimRow> rows) {
        List<String> ids = rows.stream()
                // at step 0, a task due later than it was created may be a timer that started (its instant is in its
                // step row); a task submitted without delay and never released is not, and costs no read
                .filter(r -> r.currentStep() > 0 || r.status() == TaskStatus.COMPENSATING || r.nextAttemptAt() > r.createdAt())
                .map(ClaimRow::taskId)
                .toList();
        if (ids.isEmpty()) {
            return Map.of();
        }
        Map<String, TreeMap<Integer, String>> byTask = new HashMap<>();
        Map<String, List<Integer>> skippedByTask = new HashMap<>();
        Query q = h.createQuery("SELECT task_id, step_index, state, output FROM " + db.t().step()
                + " WHERE task_id IN (" + Dialect.placeholders(ids.size()) + ")");
        Rows.bindAll(q, 0, ids);
        q.map((rs, ctx) -> {
            String state = rs.getString(3);
            if (StepStatus.COMPLETED.name().equals(state) || StepStatus.WAITING.name().equals(state)) {
                byTask.computeIfAbsent(rs.getString(1), k -> new TreeMap<>()).put(rs.getInt(2), rs.getString(4));
            } else if (StepStatus.SKIPPED.name().equals(state)) {
                skippedByTask.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getInt(2));
            }
            return null;
        }).forEach(x -> { });
        Map<String, StepsSoFar> out = new HashMap<>();
        for (String id : ids) {
            List<String> list = new ArrayList<>();
            byTask.getOrDefault(id, new TreeMap<>()).forEach((index, output) -> {
                while (list.size() <= index) {
                    list.add(null);
                }
                list.set(index, output);
            });
            out.put(id, new StepsSoFar(list, skippedByTask.getOrDefault(id, List.of())));
        }
        return out;
    }
}
