package dev.sas.jdbc.internal;

import static dev.sas.jdbc.internal.Rows.millisOrNull;
import static dev.sas.jdbc.internal.Rows.setLong;
import static dev.sas.jdbc.internal.Rows.setString;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.StorableText;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes transitions: the fenced task update, step rows, compensation results and events, all in
 * one transaction. The hot path of the runtime, so plain JDBC batches and multi-row inserts on the
 * transaction's connection: binding through Jdbi cost more CPU per row than the database spent on
 * it. Thread-safe.
 */
final class TransitionWriter {

    private final StoreContext db;
    private final String updateTask;
    private final String upsertCompensation;

    TransitionWriter(StoreContext db) {
        this.db = db;
        // Everything a transition changes, conditional on lease and guard. Integer flags rather than
        // statement variants keep the whole batch one prepared statement.
        this.updateTask = "UPDATE " + db.t().task() + " SET state = ?, current_step = ?, current_step_name = ?,"
                + " attempt = ?, failure_count = ?, step_timeout_ms = ?, updated_at = ?,"
                + " locked_by = CASE WHEN ? = 1 THEN locked_by WHEN ? = 2 THEN '" + Transition.AWAITING_REPLY_HOLDER
                + "' ELSE NULL END, complete_by = CASE WHEN ? = 2 THEN complete_by ELSE ? END,"
                + " next_attempt_at = CASE WHEN ? >= 1 THEN next_attempt_at ELSE ? END,"
                + " last_error = COALESCE(?, last_error), last_transition = ?"
                + " WHERE task_id = ? AND lease = ? AND locked_by IS NOT NULL"
                + " AND ((? = 1 AND complete_by >= ?) OR (? = 0 AND complete_by < ?))"
                + " AND (? = 0 OR cancel_requested = FALSE) AND current_step = ? AND state = ?"
                + " AND (last_transition IS NULL OR last_transition <> ?)";
        this.upsertCompensation = db.dialect().upsertCompensationSql(db.t());
    }

    /**
     * See {@code StateStore.write}. A transition holding text no store can hold is refused before
     * anything is sent. If the database refuses a value of the batch with a data error (SQLState
     * class 22: too long, bad encoding), the batch is rolled back and written one transition per
     * transaction, so that only the transition holding the value is refused and the others commit.
     */
    List<WriteOutcome> write(List<Transition> transitions, Instant now) {
        WriteOutcome[] outcomes = new WriteOutcome[transitions.size()];
        List<Transition> storable = new ArrayList<>(transitions.size());
        List<Integer> positions = new ArrayList<>(transitions.size());
        for (int i = 0; i < transitions.size(); i++) {
            String problem = StorableText.problemIn(transitions.get(i));
            if (problem != null) {
                outcomes[i] = WriteOutcome.refused(problem);
            } else {
                storable.add(transitions.get(i));
                positions.add(i);
            }
        }
        List<WriteOutcome> written = writeIsolatingDataErrors(storable, now);
        for (int k = 0; k < written.size(); k++) {
            outcomes[positions.get(k)] = written.get(k);
        }
        return Arrays.asList(outcomes);
    }

    private List<WriteOutcome> writeIsolatingDataErrors(List<Transition> transitions, Instant now) {
        if (transitions.isEmpty()) {
            return List.of();
        }
        try {
            return writeBatch(transitions, now);
        } catch (StateStoreException e) {
            SQLException dataError = StoreContext.dataError(e);
            if (dataError == null) {
                throw e;
            }
            if (transitions.size() == 1) {
                return List.of(WriteOutcome.refused(db.dialect().name() + " refused a value (SQLState "
                        + dataError.getSQLState() + "): " + StoreContext.firstLine(dataError.getMessage())));
            }
            List<WriteOutcome> outcomes = new ArrayList<>(transitions.size());
            for (Transition t : transitions) {
                outcomes.add(writeIsolatingDataErrors(List.of(t), now).get(0));
            }
            return outcomes;
        }
    }

    private List<WriteOutcome> writeBatch(List<Transition> transitions, Instant now) {
        String firstId = transitions.get(0).taskId().value();
        return db.run("write of " + transitions.size() + " transition(s)", transitions.size() == 1 ? firstId : null,
                () -> db.jdbi().inTransaction(h -> {
                    try {
                        return writeIn(h.getConnection(), transitions, now.toEpochMilli());
                    } catch (SQLException e) {
                        throw new StateStoreException("write of " + transitions.size() + " transition(s) failed on "
                                + db.dialect().name() + ": " + StoreContext.rootMessage(e), e);
                    }
                }));
    }

    /** Writes {@code transitions} on {@code c}, in the caller's transaction (see {@link #write}). */
    List<WriteOutcome> writeIn(Connection c, List<Transition> transitions, long nowMs) throws SQLException {
        int n = transitions.size();
        // Lock rows in task-id order so that two batches touching the same tasks cannot deadlock.
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> transitions.get(a).taskId().value().compareTo(transitions.get(b).taskId().value()));

        WriteOutcome[] outcomes = new WriteOutcome[n];
        markBusyRecoveries(c, transitions, order, outcomes);
        List<Integer> toUpdate = new ArrayList<>(n);
        for (int i : order) {
            if (outcomes[i] == null) {
                toUpdate.add(i);
            }
        }
        int[] counts;
        try (PreparedStatement updates = c.prepareStatement(updateTask)) {
            for (int i : toUpdate) {
                bindUpdate(updates, transitions.get(i), nowMs);
                updates.addBatch();
            }
            counts = toUpdate.isEmpty() ? new int[0] : updates.executeBatch();
        }
        List<Integer> notApplied = new ArrayList<>();
        for (int k = 0; k < toUpdate.size(); k++) {
            int i = toUpdate.get(k);
            if (counts[k] == Statement.SUCCESS_NO_INFO) {
                throw new StateStoreException("the JDBC driver reported no update counts for a batch; the store"
                        + " needs them for fencing (MariaDB: do not set useBulkStmts=true)");
            }
            if (counts[k] > 0) {
                outcomes[i] = WriteOutcome.APPLIED;
            } else {
                outcomes[i] = WriteOutcome.STALE;
                notApplied.add(i);
            }
        }
        if (!notApplied.isEmpty()) {
            resolveNotApplied(c, transitions, notApplied, outcomes, nowMs);
        }

        List<Transition> steps = new ArrayList<>();
        List<TaskEvent> events = new ArrayList<>();
        Map<TaskId, String> replyTo = new HashMap<>();
        PreparedStatement compensations = null;
        try {
            for (int i : order) {
                if (outcomes[i] != WriteOutcome.APPLIED) {
                    continue;
                }
                Transition x = transitions.get(i);
                StepUpdate u = x.step();
                if (u != null && u.compensation()) {
                    compensations = compensations == null ? c.prepareStatement(upsertCompensation) : compensations;
                    compensations.setString(1, x.taskId().value());
                    compensations.setInt(2, u.index());
                    setString(compensations, 3, u.name());
                    setString(compensations, 4, u.compensationStatus() == null ? null : u.compensationStatus().name());
                    setString(compensations, 5, u.error());
                    compensations.addBatch();
                } else if (u != null) {
                    steps.add(x);
                }
                events.addAll(x.events());
                if (x.replyTo() != null) {
                    replyTo.put(x.taskId(), x.replyTo());
                }
            }
            if (compensations != null) {
                compensations.executeBatch();
            }
        } finally {
            Rows.closeQuietly(compensations);
        }
        upsertSteps(c, steps);
        Rows.insertEvents(c, db.t(), events, replyTo);
        return Arrays.asList(outcomes);
    }

    /**
     * A recovery of an expired claim must not wait for a row another transaction holds: that
     * transaction may belong to a node frozen or cut off in the middle of a write, and waiting for
     * it would hold up the recovery of every other expired claim until the server ends its session.
     * Locks the recoveries' rows without waiting and answers {@link WriteOutcome#BUSY} for the held
     * ones (a row that no longer exists is left to the update, which finds it stale).
     */
    private void markBusyRecoveries(Connection c, List<Transition> transitions, Integer[] order,
            WriteOutcome[] outcomes) throws SQLException {
        List<String> ids = new ArrayList<>();
        for (int i : order) {
            if (transitions.get(i).guard() == Transition.Guard.EXPIRED) {
                ids.add(transitions.get(i).taskId().value());
            }
        }
        ids = ids.stream().distinct().toList();
        String lockSql = ids.isEmpty() ? null : db.dialect().lockUnlessLockedSql(db.t(), ids.size());
        if (lockSql == null) {
            return;
        }
        Set<String> held = new HashSet<>(ids);
        held.removeAll(selectIds(c, lockSql, ids));
        if (held.isEmpty()) {
            return;
        }
        List<String> heldIds = List.copyOf(held);
        Set<String> existing = new HashSet<>(selectIds(c, "SELECT task_id FROM " + db.t().task()
                + " WHERE task_id IN (" + Dialect.placeholders(heldIds.size()) + ")", heldIds));
        for (int i : order) {
            Transition x = transitions.get(i);
            if (x.guard() == Transition.Guard.EXPIRED && existing.contains(x.taskId().value())) {
                outcomes[i] = WriteOutcome.BUSY;
            }
        }
    }

    private static List<String> selectIds(Connection c, String sql, List<String> ids) throws SQLException {
        List<String> found = new ArrayList<>(ids.size());
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            Rows.setStrings(ps, 1, ids);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.add(rs.getString(1));
                }
            }
        }
        return found;
    }

    private static void bindUpdate(PreparedStatement updates, Transition x, long nowMs) throws SQLException {
        int holder = x.guard() == Transition.Guard.HOLDER ? 1 : 0;
        // 1: keep the claim; 2: await a reply (pseudo-holder, lease and deadline kept); 0: release
        int keep = x.keepLock() ? 1 : x.status() == dev.sas.core.TaskStatus.AWAITING_REPLY ? 2 : 0;
        long timeout = x.stepTimeout().toMillis();
        updates.setString(1, x.status().name());
        updates.setInt(2, x.currentStep());
        setString(updates, 3, x.currentStepName());
        updates.setInt(4, x.attempt());
        updates.setInt(5, x.failureCount());
        updates.setLong(6, timeout);
        updates.setLong(7, nowMs);
        updates.setInt(8, keep);
        updates.setInt(9, keep);
        updates.setInt(10, keep);
        setLong(updates, 11, x.keepLock() ? Long.valueOf(nowMs + timeout) : null);
        updates.setInt(12, keep);
        setLong(updates, 13, x.keepLock() || x.status().isTerminal() ? null : millisOrNull(x.nextAttemptAt()));
        setString(updates, 14, x.lastError());
        updates.setLong(15, x.id());
        updates.setString(16, x.taskId().value());
        updates.setLong(17, x.lease());
        updates.setInt(18, holder);
        updates.setLong(19, nowMs);
        updates.setInt(20, holder);
        updates.setLong(21, nowMs);
        updates.setInt(22, x.unlessCancelRequested() ? 1 : 0);
        updates.setInt(23, x.fromStep());
        updates.setString(24, x.fromStatus().name());
        updates.setLong(25, x.id());
    }

    /** Step rows of applied transitions, as multi-row upserts. */
    private void upsertSteps(Connection c, List<Transition> rows) throws SQLException {
        Rows.insertRows(c, rows, n -> db.dialect().upsertStepSql(db.t(), n), (ps, k, x) -> {
            StepUpdate u = x.step();
            ps.setString(k++, x.taskId().value());
            ps.setInt(k++, u.index());
            setString(ps, k++, u.name());
            setString(ps, k++, u.status() == null ? null : u.status().name());
            ps.setInt(k++, u.attempts());
            setString(ps, k++, u.output());
            setString(ps, k++, u.error());
            setLong(ps, k++, millisOrNull(u.startedAt()));
            setLong(ps, k++, millisOrNull(u.finishedAt()));
            return k;
        });
    }

    /**
     * Tells, among transitions that changed nothing, a replay of one already applied (the task's
     * last transition is this one) and one that lost to a cancel request (its lease, state, step and
     * guard still hold, only cancel_requested stopped it) from a stale one. Rare, so one extra read.
     */
    private void resolveNotApplied(Connection c, List<Transition> transitions, List<Integer> candidates,
            WriteOutcome[] outcomes, long nowMs) throws SQLException {
        List<String> ids = candidates.stream().map(i -> transitions.get(i).taskId().value()).distinct().toList();
        Map<String, Object[]> rows = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT task_id, lease, locked_by, complete_by,"
                + " cancel_requested, current_step, state, last_transition FROM " + db.t().task()
                + " WHERE task_id IN (" + Dialect.placeholders(ids.size()) + ")")) {
            Rows.setStrings(ps, 1, ids);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.put(rs.getString(1), new Object[] {
                        rs.getLong(2), rs.getString(3), RowMapper.longOrNull(rs, 4), rs.getBoolean(5), rs.getInt(6),
                        rs.getString(7), RowMapper.longOrNull(rs, 8)});
                }
            }
        }
        for (int i : candidates) {
            Transition x = transitions.get(i);
            Object[] r = rows.get(x.taskId().value());
            if (r != null && r[6] != null && (long) r[6] == x.id()) {
                outcomes[i] = WriteOutcome.APPLIED_ALREADY;
                continue;
            }
            if (r == null || !x.unlessCancelRequested() || (long) r[0] != x.lease() || r[1] == null || r[2] == null
                    || (int) r[4] != x.fromStep() || !x.fromStatus().name().equals(r[5])) {
                continue;
            }
            boolean expired = (long) r[2] < nowMs;
            boolean guardHolds = x.guard() == Transition.Guard.HOLDER ? !expired : expired;
            if (guardHolds && (boolean) r[3]) {
                outcomes[i] = WriteOutcome.CANCEL_REQUESTED;
            }
        }
    }
}
