package dev.sas.jdbc.internal;

import static dev.sas.jdbc.internal.Rows.millisOrNull;
import static dev.sas.jdbc.internal.Rows.setString;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
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
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes transitions: the fenced task update, step rows, compensation results and events, all in
 * one transaction. The hot path of the runtime, so plain JDBC batches and multi-row inserts on the
 * transaction's connection: binding through Jdbi cost more CPU per row than the database spent on
 * it. Thread-safe.
 */
final class TransitionWriter {

    /**
     * The values of one transition's fenced update, each a {@code {slot}} token of {@link #SET} and
     * {@link #WHERE}, with its array element type ({@link ArrayColumns}).
     */
    private enum Slot {
        STATE("varchar"), STEP("int4"), STEP_NAME("varchar"), ATTEMPT("int4"), FAILURES("int4"), TIMEOUT("int8"),
        NOW("int8"), KEEP("int4"), COMPLETE_BY("int8"), NEXT_AT("int8"), ERROR("text"), ID("int8"),
        TASK_ID("varchar"), LEASE("int8"), HOLDER("int4"), UNLESS_CANCEL("int4"), FROM_STEP("int4"),
        FROM_STATE("varchar"), PENDING("int8");

        final String arrayType;

        Slot(String arrayType) {
            this.arrayType = arrayType;
        }
    }

    /**
     * Everything a transition changes (keep: 1 keeps the claim, 2 awaits a reply, 0 releases).
     * Integer flags rather than statement variants keep every transition one statement text.
     */
    private static final String SET = " SET state = {state}, current_step = {step}, current_step_name = {step_name},"
            + " attempt = {attempt}, failure_count = {failures}, step_timeout_ms = {timeout}, updated_at = {now},"
            + " locked_by = CASE WHEN {keep} = 1 THEN locked_by WHEN {keep} = 2 THEN '" + Transition.AWAITING_COMPLETION_HOLDER
            + "' ELSE NULL END, complete_by = CASE WHEN {keep} = 2 THEN complete_by ELSE {complete_by} END,"
            + " next_attempt_at = CASE WHEN {keep} >= 1 THEN next_attempt_at ELSE {next_at} END,"
            + " last_error = COALESCE({error}, last_error), last_transition = {id}, " + EventRows.CLEAR_PENDING_START;

    /**
     * The fence: lease, held, guard (holder: deadline not passed; expired: passed), cancel, step,
     * state, not a replay, and the claim's pending start as read before (-1: none), so that a start
     * a cancel request wrote in between is not written twice. "Held" is written so that it does not
     * imply {@code locked_by IS NOT NULL}: PostgreSQL would otherwise drive the update from arrays by
     * the partial expired-claim index, its statistics taken when nothing was held, and scan the
     * arrays once per held row.
     */
    private static final String WHERE = " task_id = {task_id} AND lease = {lease} AND COALESCE(locked_by, '') <> ''"
            + " AND (({holder} = 1 AND complete_by >= {now}) OR ({holder} = 0 AND complete_by < {now}))"
            + " AND ({unless_cancel} = 0 OR cancel_requested = FALSE) AND current_step = {from_step}"
            + " AND state = {from_state} AND (last_transition IS NULL OR last_transition <> {id})"
            + " AND " + EventRows.PENDING_START_FENCE + " = {pending}";

    /** The array element type of each slot, in slot order. */
    private static final String[] ARRAY_TYPES = Arrays.stream(Slot.values()).map(x -> x.arrayType)
            .toArray(String[]::new);

    private static final Pattern TOKEN = Pattern.compile("\\{([a-z_]+)\\}");

    private final StoreContext db;
    /** The pending starts of this store's own claims, so that their writes need not read them. */
    private final PendingStarts known;
    /** One transition's update, with a {@code ?} for each slot token, in {@link #updateSlots} order. */
    private final String updateTask;
    private final List<Slot> updateSlots = new ArrayList<>();
    /** The array element type of each {@code ?} of {@link #updateTask}. */
    private final String[] updateTypes;
    /** Many transitions' update from one array per slot, returning the ids it changed; null if the dialect has none. */
    private final String updateTasksFromArrays;
    private final StepRows stepRows;
    private final String upsertCompensation;

    TransitionWriter(StoreContext db, PendingStarts known) {
        this.db = db;
        this.known = known;
        this.stepRows = new StepRows(db);
        Matcher m = TOKEN.matcher(SET + " WHERE" + WHERE);
        StringBuilder row = new StringBuilder("UPDATE " + db.t().task());
        while (m.find()) {
            updateSlots.add(Slot.valueOf(m.group(1).toUpperCase(Locale.ROOT)));
            m.appendReplacement(row, "?");
        }
        this.updateTask = m.appendTail(row).toString();
        this.updateTypes = updateSlots.stream().map(x -> x.arrayType).toArray(String[]::new);
        if (db.dialect().bindsArrays()) {
            StringBuilder names = new StringBuilder();
            for (Slot slot : Slot.values()) {
                names.append(names.length() == 0 ? "" : ", ").append("v_").append(slot.name().toLowerCase(Locale.ROOT));
            }
            this.updateTasksFromArrays = "UPDATE " + db.t().task() + " AS t" + TOKEN.matcher(SET).replaceAll("v.v_$1")
                    + " FROM " + ArrayColumns.unnest(ARRAY_TYPES) + " AS v(" + names + ") WHERE"
                    + TOKEN.matcher(WHERE.replace(" task_id = {task_id}", " t.task_id = {task_id}"))
                            .replaceAll("v.v_$1")
                    + " RETURNING t.task_id";
        } else {
            this.updateTasksFromArrays = null;
        }
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
        BusyRecoveries.mark(c, db, transitions, order, outcomes);
        Map<String, TaskEvent> pendingStarts = known.of(c, db, transitions, order, outcomes, true);
        List<Integer> toUpdate = new ArrayList<>(n);
        for (int i : order) {
            if (outcomes[i] == null) {
                toUpdate.add(i);
            }
        }
        // the pending start each update was fenced by, written with its events if it applied
        TaskEvent[] starts = new TaskEvent[n];
        List<Integer> notApplied = update(c, transitions, toUpdate, pendingStarts, nowMs, outcomes, starts);
        if (!notApplied.isEmpty()) {
            // A cancel request writes a claim's pending start (and clears it) between the read above
            // and the update: those transitions go again with what the rows hold now. A cancel is
            // requested once per claim, and only a claim sets a pending start, so once is enough.
            Map<String, TaskEvent> current = known.of(c, db, transitions, notApplied.toArray(Integer[]::new),
                    new WriteOutcome[n], false);
            List<Integer> again = new ArrayList<>();
            for (int i : notApplied) {
                if (EventRows.fenceValue(current.get(transitions.get(i).taskId().value()))
                        != EventRows.fenceValue(starts[i])) {
                    again.add(i);
                }
            }
            if (!again.isEmpty()) {
                notApplied.removeAll(again);
                notApplied.addAll(update(c, transitions, again, current, nowMs, outcomes, starts));
            }
        }
        if (!notApplied.isEmpty()) {
            resolveNotApplied(c, transitions, notApplied, outcomes, nowMs);
        }

        List<Transition> steps = new ArrayList<>();
        EventRows.Batch eventRows = new EventRows.Batch();
        List<TaskEvent> events = new ArrayList<>();
        Map<TaskId, String> statusChannel = new HashMap<>();
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
                // the claim's start event, pending in the task row until now, goes first
                eventRows.add(starts[i], x.events());
                events.addAll(x.events());
                if (x.statusChannel() != null) {
                    statusChannel.put(x.taskId(), x.statusChannel());
                }
            }
            if (compensations != null) {
                compensations.executeBatch();
            }
        } finally {
            Rows.closeQuietly(compensations);
        }
        stepRows.upsert(c, steps);
        eventRows.insert(c, db.t(), db.dialect().bindsArrays());
        // a status channel heard of the start at the claim
        Rows.insertOutbox(c, db.t(), events, statusChannel);
        for (int i = 0; i < n; i++) {
            Transition x = transitions.get(i);
            if (outcomes[i] == WriteOutcome.APPLIED && x.keepLock()) {
                known.claimed(x.taskId().value(), x.lease(), null); // still held, its start written
            } else if (outcomes[i] != WriteOutcome.CANCEL_REQUESTED && outcomes[i] != WriteOutcome.BUSY) {
                known.forget(x.taskId().value());
            }
        }
        return Arrays.asList(outcomes);
    }


    /**
     * Runs the fenced update of {@code toUpdate} (in that order), each fenced by its task's pending
     * start in {@code pendingStarts} (kept in {@code starts}); sets the outcome of each applied one
     * and answers the others (STALE until resolved).
     */
    private List<Integer> update(Connection c, List<Transition> transitions, List<Integer> toUpdate,
            Map<String, TaskEvent> pendingStarts, long nowMs, WriteOutcome[] outcomes, TaskEvent[] starts)
            throws SQLException {
        // two transitions of one task in a batch: only the first can find the claim's start pending,
        // and they go one statement each, in turn (one statement would change the row once)
        Set<TaskId> seen = new HashSet<>();
        boolean distinct = true;
        for (int i : toUpdate) {
            TaskId id = transitions.get(i).taskId();
            boolean first = seen.add(id);
            distinct &= first;
            starts[i] = first ? pendingStarts.get(id.value()) : null;
        }
        IntFunction<Object[]> values = i -> values(transitions.get(i), nowMs, EventRows.fenceValue(starts[i]));
        int[] counts = updateTasksFromArrays != null && toUpdate.size() >= 2 && distinct
                ? updateFromArrays(c, transitions, toUpdate, values)
                : updateEach(c, toUpdate, values);
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
        return notApplied;
    }

    /** One transition's update values, by {@link Slot} ordinal. */
    private static Object[] values(Transition x, long nowMs, long pendingAt) {
        int keep = x.keepLock() ? 1 : x.status() == TaskStatus.AWAITING_COMPLETION ? 2 : 0;
        long timeout = x.stepTimeout().toMillis();
        Object[] v = new Object[Slot.values().length];
        v[Slot.STATE.ordinal()] = x.status().name();
        v[Slot.STEP.ordinal()] = x.currentStep();
        v[Slot.STEP_NAME.ordinal()] = x.currentStepName();
        v[Slot.ATTEMPT.ordinal()] = x.attempt();
        v[Slot.FAILURES.ordinal()] = x.failureCount();
        v[Slot.TIMEOUT.ordinal()] = timeout;
        v[Slot.NOW.ordinal()] = nowMs;
        v[Slot.KEEP.ordinal()] = keep;
        v[Slot.COMPLETE_BY.ordinal()] = x.keepLock() ? Long.valueOf(nowMs + timeout) : null;
        v[Slot.NEXT_AT.ordinal()] = x.keepLock() || x.status().isTerminal() ? null : millisOrNull(x.nextAttemptAt());
        v[Slot.ERROR.ordinal()] = x.lastError();
        v[Slot.ID.ordinal()] = x.id();
        v[Slot.TASK_ID.ordinal()] = x.taskId().value();
        v[Slot.LEASE.ordinal()] = x.lease();
        v[Slot.HOLDER.ordinal()] = x.guard() == Transition.Guard.HOLDER ? 1 : 0;
        v[Slot.UNLESS_CANCEL.ordinal()] = x.unlessCancelRequested() ? 1 : 0;
        v[Slot.FROM_STEP.ordinal()] = x.fromStep();
        v[Slot.FROM_STATE.ordinal()] = x.fromStatus().name();
        v[Slot.PENDING.ordinal()] = pendingAt;
        return v;
    }

    /** One update per transition, as a JDBC batch; the update counts. */
    private int[] updateEach(Connection c, List<Integer> toUpdate, IntFunction<Object[]> values)
            throws SQLException {
        if (toUpdate.isEmpty()) {
            return new int[0];
        }
        try (PreparedStatement updates = c.prepareStatement(updateTask)) {
            for (int i : toUpdate) {
                Object[] v = values.apply(i);
                Object[] row = new Object[updateSlots.size()];
                for (int j = 0; j < row.length; j++) {
                    row[j] = v[updateSlots.get(j).ordinal()];
                }
                ArrayColumns.bindRow(updates, 1, row, updateTypes);
                updates.addBatch();
            }
            return updates.executeBatch();
        }
    }

    /**
     * All of {@code toUpdate} in one statement, one array per slot in task-id order (so rows are
     * locked in that order, as a batch locks them); update counts (1 or 0) from the ids it returns.
     */
    private int[] updateFromArrays(Connection c, List<Transition> transitions, List<Integer> toUpdate,
            IntFunction<Object[]> values) throws SQLException {
        int n = toUpdate.size();
        ArrayColumns columns = new ArrayColumns(n, ARRAY_TYPES);
        for (int k = 0; k < n; k++) {
            columns.setRow(k, values.apply(toUpdate.get(k)));
        }
        Set<String> changed = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(updateTasksFromArrays)) {
            columns.bind(c, ps, 1);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    changed.add(rs.getString(1));
                }
            }
        }
        int[] counts = new int[n];
        for (int k = 0; k < n; k++) {
            counts[k] = changed.contains(transitions.get(toUpdate.get(k)).taskId().value()) ? 1 : 0;
        }
        return counts;
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
