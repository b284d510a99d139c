package dev.sas.jdbc.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Handles;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.spi.JdbiPlugin;
import org.jdbi.v3.core.statement.Query;
import org.jdbi.v3.core.statement.TemplateEngine;

/**
 * The SQL behind {@code JdbcStateStore}: the semantics of {@code InMemoryStateStore}, in SQL that
 * is the same on every database except where {@link Dialect} says otherwise. Thread-safe. Not API.
 */
public final class JdbcStore {

    private static final String FINAL_STATES = "('PROCESSED','COMPENSATED','CANCELLED')";
    private static final int PURGE_CHUNK = 100;
    /** Tries of a claim transaction that the database chose as a deadlock victim. */
    private static final int CLAIM_ATTEMPTS = 3;
    /** Rows per multi-row INSERT (7–9 parameters each, far below every driver's limit). */
    private static final int ROWS_PER_STATEMENT = 128;
    private static final String TASK_COLUMNS = "task_id, workflow, workflow_version, business_key, state, priority,"
            + " current_step, failure_count, locked_by, lease, complete_by, next_attempt_at, created_at, updated_at,"
            + " last_error, cancel_requested";

    private final Jdbi jdbi;
    /** Opens handles on the host's connection set for the current submit (built once: Jdbi setup is costly). */
    private final Jdbi hostJdbi;
    private final ThreadLocal<Connection> hostConnection = new ThreadLocal<>();
    private final Dialect dialect;
    private final Tables t;
    private final int maxPayloadBytes;

    private final String insertTask;
    private final String updateTask;
    private final String upsertCompensation;

    /** A store on {@code jdbi}, whose schema is already in place. */
    public JdbcStore(Jdbi jdbi, Dialect dialect, Tables tables, int maxPayloadBytes) {
        this.jdbi = jdbi;
        this.hostJdbi = Jdbi.create(new HostConnection(hostConnection)).installPlugin(PLUGIN);
        hostJdbi.getConfig(Handles.class).setForceEndTransactions(false);
        this.dialect = dialect;
        this.t = tables;
        this.maxPayloadBytes = maxPayloadBytes;
        this.insertTask = dialect.insertTaskSql(t);
        // Everything a transition changes, conditional on lease and guard. Integer flags rather than
        // statement variants keep the whole batch one prepared statement.
        this.updateTask = "UPDATE " + t.task() + " SET state = ?, current_step = ?, current_step_name = ?,"
                + " attempt = ?, failure_count = ?, step_timeout_ms = ?, updated_at = ?,"
                + " locked_by = CASE WHEN ? = 1 THEN locked_by ELSE NULL END, complete_by = ?,"
                + " next_attempt_at = CASE WHEN ? = 1 THEN next_attempt_at ELSE ? END,"
                + " last_error = COALESCE(?, last_error)"
                + " WHERE task_id = ? AND lease = ? AND locked_by IS NOT NULL"
                + " AND ((? = 1 AND complete_by >= ?) OR (? = 0 AND complete_by < ?))"
                + " AND (? = 0 OR cancel_requested = FALSE) AND current_step = ?";
        this.upsertCompensation = dialect.upsertCompensationSql(t);
    }

    /** Configures a Jdbi the way the store's SQL expects (positional parameters, no templating). */
    public static final JdbiPlugin PLUGIN = new JdbiPlugin() {
        @Override
        public void customizeJdbi(Jdbi j) {
            j.setTemplateEngine(TemplateEngine.NOP);
        }
    };

    /** The dialect in use. */
    public Dialect dialect() {
        return dialect;
    }

    // ---------------------------------------------------------------- submit

    /** See {@code StateStore.submit}. */
    public SubmitResult submit(NewTask task, TaskEvent received, Object transaction) {
        checkSizes(task);
        if (transaction == null) {
            return run("submit", task.taskId(), () -> jdbi.inTransaction(h -> submitIn(h, task, received)));
        }
        if (transaction instanceof Handle handle) {
            return run("submit", task.taskId(), () -> submitJoined(handle, task, received));
        }
        if (transaction instanceof Connection connection) {
            return run("submit", task.taskId(), () -> {
                hostConnection.set(connection);
                try (Handle h = hostJdbi.open()) {
                    return submitJoined(h, task, received);
                } finally {
                    hostConnection.remove();
                }
            });
        }
        throw new IllegalArgumentException("cannot join a transaction of type " + transaction.getClass().getName()
                + " for task " + task.taskId() + ": pass a java.sql.Connection, an org.jdbi.v3.core.Handle, or null");
    }

    private SubmitResult submitJoined(Handle h, NewTask task, TaskEvent received) {
        boolean autoCommit;
        try {
            autoCommit = h.getConnection().getAutoCommit();
        } catch (SQLException e) {
            throw new StateStoreException("submit failed for task " + task.taskId()
                    + ": cannot read the host connection's auto-commit mode", e);
        }
        // A connection in auto-commit mode is not in a transaction; the task row and its RECEIVED
        // event must still commit together, so they get one of their own.
        return autoCommit ? h.inTransaction(x -> submitIn(x, task, received)) : submitIn(h, task, received);
    }

    private SubmitResult submitIn(Handle h, NewTask task, TaskEvent received) {
        int inserted;
        try {
            inserted = h.createUpdate(insertTask)
                    .bind(0, task.taskId().value())
                    .bind(1, task.workflow())
                    .bind(2, task.workflowVersion())
                    .bind(3, task.businessKey())
                    .bind(4, task.priority())
                    .bind(5, millis(task.dueAt()))
                    .bind(6, task.firstStepName())
                    .bind(7, task.firstStepTimeout().toMillis())
                    .bind(8, millis(task.createdAt()))
                    .bind(9, millis(task.createdAt()))
                    .bind(10, task.input())
                    .bind(11, task.replyTo())
                    .execute();
        } catch (JdbiException e) {
            if (!dialect.isDuplicateKey(e)) {
                throw e;
            }
            inserted = 0;
        }
        if (inserted == 1) {
            insertEvents(h, List.of(received));
            return new SubmitResult(task.taskId(), true);
        }
        Optional<String> existing = h.createQuery("SELECT task_id FROM " + t.task()
                        + " WHERE workflow = ? AND business_key = ?" + dialect.latestCommittedReadSuffix())
                .bind(0, task.workflow()).bind(1, task.businessKey())
                .mapTo(String.class).findOne();
        if (existing.isPresent()) {
            return new SubmitResult(TaskId.of(existing.get()), false);
        }
        boolean idTaken = h.createQuery("SELECT COUNT(*) FROM " + t.task() + " WHERE task_id = ?")
                .bind(0, task.taskId().value()).mapTo(Long.class).one() > 0;
        if (idTaken) {
            throw new IllegalArgumentException("task id " + task.taskId() + " already exists");
        }
        throw new StateStoreException("submit of task " + task.taskId() + " collided with a submission of business key '"
                + task.businessKey() + "' that is not visible (yet); retry");
    }

    private void checkSizes(NewTask task) {
        long bytes = utf8Length(task.input());
        if (bytes > maxPayloadBytes) {
            throw new IllegalArgumentException("input of task " + task.taskId() + " (workflow '" + task.workflow()
                    + "', business key '" + abbreviate(task.businessKey()) + "') is " + bytes
                    + " bytes, more than maxPayloadBytes " + maxPayloadBytes
                    + "; store large data elsewhere and submit a reference");
        }
        checkLength("workflow", task.workflow(), 128, task);
        checkLength("businessKey", task.businessKey(), 255, task);
        checkLength("replyTo", task.replyTo(), 255, task);
        checkLength("firstStepName", task.firstStepName(), 200, task);
    }

    private static void checkLength(String what, String value, int max, NewTask task) {
        if (value != null && value.length() > max) {
            throw new IllegalArgumentException(what + " of task " + task.taskId() + " must be at most " + max
                    + " characters, was " + value.length());
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    // ---------------------------------------------------------------- claim

    /** See {@code StateStore.claim}. */
    public List<ClaimedTask> claim(String instanceId, int limit, Instant now) {
        if (limit <= 0) {
            return List.of();
        }
        long nowMs = millis(now);
        return run("claim by " + instanceId, null, () -> {
            if (dialect.claimRecordsEvents()) {
                // one statement claims and records the start events: no transaction round trips
                // needed, and the outputs of tasks this instance now holds cannot change under it
                return jdbi.withHandle(h -> claimIn(h, instanceId, limit, nowMs));
            }
            // MariaDB's SELECT … FOR UPDATE SKIP LOCKED can still deadlock with a concurrent claim
            // or write on index locks; the transaction was rolled back, so running it again is safe
            for (int attempt = 1; ; attempt++) {
                try {
                    return jdbi.inTransaction(h -> claimIn(h, instanceId, limit, nowMs));
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

    private List<ClaimedTask> claimIn(Handle h, String instanceId, int limit, long nowMs) {
        List<ClaimRow> rows = new ArrayList<>(dialect.claim(h, t, instanceId, limit, nowMs));
        if (rows.isEmpty()) {
            return List.of();
        }
        rows.sort(ClaimRow.ORDER);
        if (!dialect.claimRecordsEvents()) {
            List<TaskEvent> started = new ArrayList<>(rows.size());
            Instant at = Instant.ofEpochMilli(nowMs);
            for (ClaimRow r : rows) {
                started.add(new TaskEvent(TaskId.of(r.taskId()), r.businessKey(), r.workflow(),
                        r.status() == TaskStatus.COMPENSATING ? TaskEvent.Type.COMPENSATION_STARTED
                                : TaskEvent.Type.STEP_STARTED, r.currentStep(), r.currentStepName(), r.attempt(), at,
                        null));
            }
            insertEvents(h, started);
        }
        Map<String, List<String>> outputs = loadOutputs(h, rows);
        List<ClaimedTask> out = new ArrayList<>(rows.size());
        for (ClaimRow r : rows) {
            out.add(new ClaimedTask(TaskId.of(r.taskId()), r.workflow(), r.workflowVersion(), r.businessKey(),
                    r.status(), r.lease(), r.currentStep(), r.attempt(), r.failureCount(),
                    Instant.ofEpochMilli(r.completeBy()), r.cancelRequested(), r.input(), r.replyTo(),
                    Instant.ofEpochMilli(r.createdAt()), outputs.getOrDefault(r.taskId(), List.of())));
        }
        return out;
    }

    private Map<String, List<String>> loadOutputs(Handle h, List<ClaimRow> rows) {
        List<String> ids = rows.stream()
                .filter(r -> r.currentStep() > 0 || r.status() == TaskStatus.COMPENSATING)
                .map(ClaimRow::taskId)
                .toList();
        if (ids.isEmpty()) {
            return Map.of();
        }
        Map<String, TreeMap<Integer, String>> byTask = new HashMap<>();
        Query q = h.createQuery("SELECT task_id, step_index, output FROM " + t.step()
                + " WHERE state = 'COMPLETED' AND task_id IN (" + Dialect.placeholders(ids.size()) + ")");
        bindAll(q, 0, ids);
        q.map((rs, ctx) -> {
            byTask.computeIfAbsent(rs.getString(1), k -> new TreeMap<>()).put(rs.getInt(2), rs.getString(3));
            return null;
        }).forEach(x -> { });
        Map<String, List<String>> out = new HashMap<>();
        byTask.forEach((id, steps) -> {
            List<String> list = new ArrayList<>();
            steps.forEach((index, output) -> {
                while (list.size() <= index) {
                    list.add(null);
                }
                list.set(index, output);
            });
            out.put(id, list);
        });
        return out;
    }

    // ---------------------------------------------------------------- write

    /** See {@code StateStore.write}. */
    public List<WriteOutcome> write(List<Transition> transitions, Instant now) {
        if (transitions.isEmpty()) {
            return List.of();
        }
        String firstId = transitions.get(0).taskId().value();
        return run("write of " + transitions.size() + " transition(s)", transitions.size() == 1 ? firstId : null,
                () -> jdbi.inTransaction(h -> writeIn(h, transitions, millis(now))));
    }

    private List<WriteOutcome> writeIn(Handle h, List<Transition> transitions, long nowMs) {
        try {
            return writeIn(h, h.getConnection(), transitions, nowMs);
        } catch (SQLException e) {
            throw new StateStoreException("write of " + transitions.size() + " transition(s) failed on "
                    + dialect.name() + ": " + rootMessage(e), e);
        }
    }

    /**
     * The hot path: plain JDBC batches on the transaction's connection (binding through Jdbi costs
     * more CPU per row than the database spends on it here).
     */
    private List<WriteOutcome> writeIn(Handle h, Connection c, List<Transition> transitions, long nowMs)
            throws SQLException {
        int n = transitions.size();
        // Lock rows in task-id order so that two batches touching the same tasks cannot deadlock.
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> transitions.get(a).taskId().value().compareTo(transitions.get(b).taskId().value()));

        int[] counts;
        try (PreparedStatement updates = c.prepareStatement(updateTask)) {
            for (int i : order) {
                Transition x = transitions.get(i);
                int holder = x.guard() == Transition.Guard.HOLDER ? 1 : 0;
                int keep = x.keepLock() ? 1 : 0;
                long timeout = x.stepTimeout().toMillis();
                updates.setString(1, x.status().name());
                updates.setInt(2, x.currentStep());
                setString(updates, 3, x.currentStepName());
                updates.setInt(4, x.attempt());
                updates.setInt(5, x.failureCount());
                updates.setLong(6, timeout);
                updates.setLong(7, nowMs);
                updates.setInt(8, keep);
                setLong(updates, 9, x.keepLock() ? Long.valueOf(nowMs + timeout) : null);
                updates.setInt(10, keep);
                setLong(updates, 11, x.keepLock() || x.status().isTerminal() ? null : millisOrNull(x.nextAttemptAt()));
                setString(updates, 12, x.lastError());
                updates.setString(13, x.taskId().value());
                updates.setLong(14, x.lease());
                updates.setInt(15, holder);
                updates.setLong(16, nowMs);
                updates.setInt(17, holder);
                updates.setLong(18, nowMs);
                updates.setInt(19, x.unlessCancelRequested() ? 1 : 0);
                updates.setInt(20, x.fromStep());
                updates.addBatch();
            }
            counts = updates.executeBatch();
        }
        WriteOutcome[] outcomes = new WriteOutcome[n];
        List<Integer> maybeCancelled = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            int i = order[k];
            if (counts[k] == Statement.SUCCESS_NO_INFO) {
                throw new StateStoreException("the JDBC driver reported no update counts for a batch; the store"
                        + " needs them for fencing (MariaDB: do not set useBulkStmts=true)");
            }
            if (counts[k] > 0) {
                outcomes[i] = WriteOutcome.APPLIED;
            } else {
                outcomes[i] = WriteOutcome.STALE;
                if (transitions.get(i).unlessCancelRequested()) {
                    maybeCancelled.add(i);
                }
            }
        }
        if (!maybeCancelled.isEmpty()) {
            resolveCancelRequested(h, transitions, maybeCancelled, outcomes, nowMs);
        }

        List<Transition> steps = new ArrayList<>();
        List<TaskEvent> events = new ArrayList<>();
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
            }
            if (compensations != null) {
                compensations.executeBatch();
            }
        } finally {
            closeQuietly(compensations);
        }
        upsertSteps(c, steps);
        insertEvents(c, events);
        return Arrays.asList(outcomes);
    }

    /** Binds one row's parameters from {@code index} on and returns the next free index. */
    private interface RowBinder<T> {
        int bind(PreparedStatement ps, int index, T row) throws SQLException;
    }

    /**
     * Rows, up to {@link #ROWS_PER_STATEMENT} per statement, in list order: a multi-row statement
     * costs the database one statement where a JDBC batch costs one per row (only PostgreSQL's
     * driver rewrites batches by itself).
     */
    private static <T> void insertRows(Connection c, List<T> rows, IntFunction<String> sqlForRows,
            RowBinder<T> binder) throws SQLException {
        for (int from = 0; from < rows.size(); from += ROWS_PER_STATEMENT) {
            int n = Math.min(ROWS_PER_STATEMENT, rows.size() - from);
            try (PreparedStatement ps = c.prepareStatement(sqlForRows.apply(n))) {
                int k = 1;
                for (int i = from; i < from + n; i++) {
                    k = binder.bind(ps, k, rows.get(i));
                }
                ps.executeUpdate();
            }
        }
    }

    /** Step rows of applied transitions, as multi-row upserts. */
    private void upsertSteps(Connection c, List<Transition> rows) throws SQLException {
        insertRows(c, rows, n -> dialect.upsertStepSql(t, n), (ps, k, x) -> {
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

    /** Events as multi-row inserts, in list order (so their ids keep each task's order). */
    private void insertEvents(Connection c, List<TaskEvent> rows) throws SQLException {
        insertRows(c, rows, n -> "INSERT INTO " + t.event()
                + " (task_id, type, step_index, step_name, attempt, at, message) VALUES " + Dialect.valueRows(n, 7),
                (ps, k, e) -> {
                    ps.setString(k++, e.taskId().value());
                    ps.setString(k++, e.type().name());
                    ps.setInt(k++, e.stepIndex());
                    setString(ps, k++, e.stepName());
                    ps.setInt(k++, e.attempt());
                    ps.setLong(k++, millis(e.at()));
                    setString(ps, k++, e.message());
                    return k;
                });
    }

    /** {@link #insertEvents(Connection, List)} in a Jdbi transaction. */
    private void insertEvents(Handle h, List<TaskEvent> rows) {
        try {
            insertEvents(h.getConnection(), rows);
        } catch (SQLException e) {
            throw new StateStoreException("recording " + rows.size() + " event(s) failed on " + dialect.name() + ": "
                    + rootMessage(e), e);
        }
    }

    private static void setString(PreparedStatement ps, int index, String value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.VARCHAR);
        } else {
            ps.setString(index, value);
        }
    }

    private static void setLong(PreparedStatement ps, int index, Long value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.BIGINT);
        } else {
            ps.setLong(index, value);
        }
    }

    private static void closeQuietly(PreparedStatement ps) {
        if (ps != null) {
            try {
                ps.close();
            } catch (SQLException ignored) {
                // the transaction's outcome is what matters; the pool resets the connection
            }
        }
    }

    private void resolveCancelRequested(Handle h, List<Transition> transitions, List<Integer> candidates,
            WriteOutcome[] outcomes, long nowMs) {
        List<String> ids = candidates.stream().map(i -> transitions.get(i).taskId().value()).distinct().toList();
        Query q = h.createQuery("SELECT task_id, lease, locked_by, complete_by, cancel_requested, current_step FROM "
                + t.task()
                + " WHERE task_id IN (" + Dialect.placeholders(ids.size()) + ")");
        bindAll(q, 0, ids);
        Map<String, Object[]> rows = new HashMap<>();
        q.map((rs, ctx) -> rows.put(rs.getString(1), new Object[] {
            rs.getLong(2), rs.getString(3), longOrNull(rs, 4), rs.getBoolean(5), rs.getInt(6)})).forEach(x -> { });
        for (int i : candidates) {
            Transition x = transitions.get(i);
            Object[] r = rows.get(x.taskId().value());
            if (r == null || (long) r[0] != x.lease() || r[1] == null || r[2] == null || (int) r[4] != x.fromStep()) {
                continue;
            }
            boolean expired = (long) r[2] < nowMs;
            boolean guardHolds = x.guard() == Transition.Guard.HOLDER ? !expired : expired;
            if (guardHolds && (boolean) r[3]) {
                outcomes[i] = WriteOutcome.CANCEL_REQUESTED;
            }
        }
    }

    // ---------------------------------------------------------------- supervisor

    /** See {@code StateStore.findExpired}. */
    public List<ExpiredTask> findExpired(Instant now, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        return run("findExpired", null, () -> jdbi.withHandle(h -> h.createQuery(
                        "SELECT task_id, workflow, workflow_version, business_key, state, lease, locked_by,"
                                + " current_step, attempt, failure_count, complete_by, cancel_requested, reply_to FROM "
                                + t.task() + " WHERE locked_by IS NOT NULL AND complete_by > ? AND complete_by < ?"
                                + " ORDER BY complete_by LIMIT ?")
                // The lower bound keeps the scan flat on H2, whose (complete_by) index also holds
                // every unlocked task under NULL: an open range starts at those and reads them all.
                .bind(0, Long.MIN_VALUE).bind(1, millis(now)).bind(2, limit)
                .map((rs, ctx) -> new ExpiredTask(TaskId.of(rs.getString(1)), rs.getString(2), rs.getInt(3),
                        rs.getString(4), TaskStatus.valueOf(rs.getString(5)), rs.getLong(6), rs.getString(7),
                        rs.getInt(8), rs.getInt(9), rs.getInt(10), Instant.ofEpochMilli(rs.getLong(11)),
                        rs.getBoolean(12), rs.getString(13)))
                .list()));
    }

    /** See {@code StateStore.tryAcquireSupervisorLease}. */
    public boolean tryAcquireSupervisorLease(String instanceId, Instant now, Duration ttl) {
        long nowMs = millis(now);
        long until = millis(now.plus(ttl));
        return run("tryAcquireSupervisorLease by " + instanceId, null, () -> jdbi.withHandle(h -> {
            for (int round = 0; round < 2; round++) {
                int n = h.createUpdate("UPDATE " + t.lease() + " SET holder = ?, expires_at = ?"
                                + " WHERE name = 'supervisor' AND (holder IS NULL OR holder = ? OR expires_at < ?)")
                        .bind(0, instanceId).bind(1, until).bind(2, instanceId).bind(3, nowMs)
                        .execute();
                if (n > 0) {
                    return true;
                }
                boolean rowExists = h.createQuery("SELECT COUNT(*) FROM " + t.lease() + " WHERE name = 'supervisor'")
                        .mapTo(Long.class).one() > 0;
                if (rowExists) {
                    return false;
                }
                // the row belongs to the schema script; a schema managed by hand may lack it
                try {
                    h.createUpdate("INSERT INTO " + t.lease() + " (name, holder, expires_at) VALUES ('supervisor', NULL, 0)")
                            .execute();
                } catch (JdbiException e) {
                    if (!dialect.isDuplicateKey(e)) {
                        throw e;
                    }
                }
            }
            return false;
        }));
    }

    /** See {@code StateStore.releaseSupervisorLease}. */
    public void releaseSupervisorLease(String instanceId) {
        run("releaseSupervisorLease by " + instanceId, null, () -> jdbi.withHandle(h -> h.createUpdate(
                        "UPDATE " + t.lease() + " SET holder = NULL, expires_at = 0 WHERE name = 'supervisor' AND holder = ?")
                .bind(0, instanceId).execute()));
    }

    // ---------------------------------------------------------------- queries

    /** See {@code StateStore.find}. */
    public Optional<TaskInfo> find(TaskId taskId) {
        return run("find", taskId, () -> jdbi.withHandle(h -> {
            Optional<TaskInfo> task = h.createQuery("SELECT " + TASK_COLUMNS + " FROM " + t.task() + " WHERE task_id = ?")
                    .bind(0, taskId.value())
                    .map((rs, ctx) -> taskInfo(rs, List.of()))
                    .findOne();
            if (task.isEmpty()) {
                return task;
            }
            List<TaskInfo.StepInfo> steps = h.createQuery("SELECT step_index, step_name, state, attempts, output, error,"
                            + " started_at, finished_at, compensation_state FROM " + t.step()
                            + " WHERE task_id = ? ORDER BY step_index")
                    .bind(0, taskId.value())
                    .map((rs, ctx) -> new TaskInfo.StepInfo(rs.getInt(1), rs.getString(2), stepStatus(rs.getString(3)),
                            rs.getInt(4), rs.getString(5), rs.getString(6), instantOrNull(rs, 7), instantOrNull(rs, 8),
                            stepStatus(rs.getString(9))))
                    .list();
            TaskInfo i = task.get();
            return Optional.of(new TaskInfo(i.taskId(), i.workflow(), i.workflowVersion(), i.businessKey(), i.status(),
                    i.priority(), i.currentStep(), i.failureCount(), i.lockedBy(), i.lease(), i.completeBy(),
                    i.nextAttemptAt(), i.createdAt(), i.updatedAt(), i.lastError(), i.cancelRequested(), steps));
        }));
    }

    /** See {@code StateStore.findByBusinessKey}. */
    public Optional<TaskId> findByBusinessKey(String workflow, String businessKey) {
        return run("findByBusinessKey '" + businessKey + "'", null, () -> jdbi.withHandle(h -> h.createQuery(
                        "SELECT task_id FROM " + t.task() + " WHERE workflow = ? AND business_key = ?")
                .bind(0, workflow).bind(1, businessKey)
                .map((rs, ctx) -> TaskId.of(rs.getString(1)))
                .findOne()));
    }

    /** See {@code StateStore.list}. */
    public List<TaskInfo> list(TaskQuery query) {
        StringBuilder sql = new StringBuilder("SELECT " + TASK_COLUMNS + " FROM " + t.task() + " WHERE 1 = 1");
        List<Object> args = new ArrayList<>();
        if (query.status() != null) {
            sql.append(" AND state = ?");
            args.add(query.status().name());
        }
        if (query.workflow() != null) {
            sql.append(" AND workflow = ?");
            args.add(query.workflow());
        }
        if (query.afterCreatedAt() != null) {
            long after = millis(query.afterCreatedAt());
            sql.append(" AND (created_at > ? OR (created_at = ? AND task_id > ?))");
            args.add(after);
            args.add(after);
            args.add(query.afterTaskId().value());
        }
        sql.append(" ORDER BY created_at, task_id LIMIT ?");
        args.add(query.limit());
        return run("list " + query, null, () -> jdbi.withHandle(h -> {
            var q = h.createQuery(sql.toString());
            for (int i = 0; i < args.size(); i++) {
                q.bind(i, args.get(i));
            }
            return q.map((rs, ctx) -> taskInfo(rs, List.of())).list();
        }));
    }

    /** See {@code StateStore.countByStatus}. */
    public Map<TaskStatus, Long> countByStatus() {
        return run("countByStatus", null, () -> jdbi.withHandle(h -> {
            Map<TaskStatus, Long> counts = new EnumMap<>(TaskStatus.class);
            h.createQuery("SELECT state, COUNT(*) FROM " + t.task() + " GROUP BY state")
                    .map((rs, ctx) -> counts.put(TaskStatus.valueOf(rs.getString(1)), rs.getLong(2)))
                    .forEach(x -> { });
            return counts;
        }));
    }

    /** See {@code StateStore.events}. */
    public List<TaskEvent> events(TaskId taskId) {
        return run("events", taskId, () -> jdbi.withHandle(h -> h.createQuery(
                        "SELECT e.type, e.step_index, e.step_name, e.attempt, e.at, e.message, t.business_key, t.workflow"
                                + " FROM " + t.event() + " e JOIN " + t.task() + " t ON t.task_id = e.task_id"
                                + " WHERE e.task_id = ? ORDER BY e.id")
                .bind(0, taskId.value())
                .map((rs, ctx) -> new TaskEvent(taskId, rs.getString(7), rs.getString(8),
                        TaskEvent.Type.valueOf(rs.getString(1)), rs.getInt(2), rs.getString(3), rs.getInt(4),
                        Instant.ofEpochMilli(rs.getLong(5)), rs.getString(6)))
                .list()));
    }

    // ---------------------------------------------------------------- operator actions

    /** See {@code StateStore.resubmit}. */
    public boolean resubmit(TaskId taskId, Instant now, TaskEvent event) {
        long nowMs = millis(now);
        return updateThenRecord("resubmit", taskId, event, "UPDATE " + t.task()
                + " SET failure_count = 0, attempt = 0, next_attempt_at = ?, updated_at = ?,"
                + " state = CASE WHEN state = 'ERROR' THEN 'PENDING' ELSE 'COMPENSATING' END"
                + " WHERE task_id = ? AND state IN ('ERROR','COMPENSATION_FAILED')", nowMs, nowMs, taskId.value());
    }

    /** See {@code StateStore.requestCancel}. */
    public boolean requestCancel(TaskId taskId, Instant now, TaskEvent event) {
        long nowMs = millis(now);
        // state is assigned last: MySQL evaluates SET assignments left to right on the new values
        return updateThenRecord("requestCancel", taskId, event, "UPDATE " + t.task()
                + " SET cancel_requested = TRUE, updated_at = ?,"
                + " next_attempt_at = CASE WHEN state = 'ERROR' THEN ? ELSE next_attempt_at END,"
                + " attempt = CASE WHEN state = 'ERROR' THEN 0 ELSE attempt END,"
                + " failure_count = CASE WHEN state = 'ERROR' THEN 0 ELSE failure_count END,"
                + " state = CASE WHEN state = 'ERROR' THEN 'PENDING' ELSE state END"
                + " WHERE task_id = ? AND cancel_requested = FALSE"
                + " AND state IN ('PENDING','PROCESSING','COMPENSATING','ERROR')", nowMs, nowMs, taskId.value());
    }

    /** Runs a conditional update and, in the same transaction, records {@code event} if it changed a row. */
    private boolean updateThenRecord(String operation, TaskId taskId, TaskEvent event, String sql, Object... args) {
        return run(operation, taskId, () -> jdbi.inTransaction(h -> {
            org.jdbi.v3.core.statement.Update update = h.createUpdate(sql);
            for (int i = 0; i < args.length; i++) {
                update.bind(i, args[i]);
            }
            if (update.execute() == 0) {
                return false;
            }
            insertEvents(h, List.of(event));
            return true;
        }));
    }

    /** See {@code StateStore.purge}. */
    public int purge(Instant finishedBefore, int limit) {
        long before = millis(finishedBefore);
        return run("purge", null, () -> {
            int deleted = 0;
            while (deleted < limit) {
                int chunk = Math.min(PURGE_CHUNK, limit - deleted);
                int done = jdbi.inTransaction(h -> {
                    List<String> ids = h.createQuery("SELECT task_id FROM " + t.task() + " WHERE state IN " + FINAL_STATES
                                    + " AND updated_at < ? ORDER BY updated_at LIMIT ?")
                            .bind(0, before).bind(1, chunk)
                            .mapTo(String.class).list();
                    if (ids.isEmpty()) {
                        return -1;
                    }
                    String in = " WHERE task_id IN (" + Dialect.placeholders(ids.size()) + ")";
                    bindAll(h.createUpdate("DELETE FROM " + t.event() + in), 0, ids).execute();
                    bindAll(h.createUpdate("DELETE FROM " + t.step() + in), 0, ids).execute();
                    return bindAll(h.createUpdate("DELETE FROM " + t.task() + in + " AND state IN " + FINAL_STATES),
                            0, ids).execute();
                });
                if (done < 0) {
                    break;
                }
                deleted += done;
                if (done < chunk) {
                    break;
                }
            }
            return deleted;
        });
    }

    // ---------------------------------------------------------------- helpers

    private <T> T run(String operation, Object taskId, Supplier<T> body) {
        try {
            return body.get();
        } catch (JdbiException e) {
            throw new StateStoreException(operation + " failed" + (taskId == null ? "" : " for task " + taskId)
                    + " on " + dialect.name() + ": " + rootMessage(e), e);
        }
    }

    static String rootMessage(Throwable e) {
        Throwable c = e;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c.getClass().getSimpleName() + ": " + c.getMessage();
    }

    private static <S extends org.jdbi.v3.core.statement.SqlStatement<S>> S bindAll(S statement, int from,
            Collection<String> values) {
        int i = from;
        for (String v : values) {
            statement.bind(i++, v);
        }
        return statement;
    }

    private static long millis(Instant i) {
        return i.toEpochMilli();
    }

    private static Long millisOrNull(Instant i) {
        return i == null ? null : i.toEpochMilli();
    }

    private static Long longOrNull(ResultSet rs, int column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
    }

    private static Instant instantOrNull(ResultSet rs, int column) throws SQLException {
        Long v = longOrNull(rs, column);
        return v == null ? null : Instant.ofEpochMilli(v);
    }

    private static StepStatus stepStatus(String s) {
        return s == null ? null : StepStatus.valueOf(s);
    }

    private static TaskInfo taskInfo(ResultSet rs, List<TaskInfo.StepInfo> steps) throws SQLException {
        return new TaskInfo(TaskId.of(rs.getString("task_id")), rs.getString("workflow"), rs.getInt("workflow_version"),
                rs.getString("business_key"), TaskStatus.valueOf(rs.getString("state")), rs.getInt("priority"),
                rs.getInt("current_step"), rs.getInt("failure_count"), rs.getString("locked_by"), rs.getLong("lease"),
                instantOrNull(rs, rs.findColumn("complete_by")), instantOrNull(rs, rs.findColumn("next_attempt_at")),
                Instant.ofEpochMilli(rs.getLong("created_at")), Instant.ofEpochMilli(rs.getLong("updated_at")),
                rs.getString("last_error"), rs.getBoolean("cancel_requested"), steps);
    }

    /** Ids joined for messages. */
    static String ids(Collection<String> ids) {
        return ids.stream().collect(Collectors.joining(", "));
    }

    /** The host's connection for the current submit: Jdbi may use it but must never close it. */
    private record HostConnection(ThreadLocal<Connection> current) implements org.jdbi.v3.core.ConnectionFactory {
        @Override
        public Connection openConnection() {
            Connection c = current.get();
            if (c == null) {
                throw new IllegalStateException("no host connection set for this thread");
            }
            return c;
        }

        @Override
        public void closeConnection(Connection toClose) {
            // owned by the host
        }
    }
}
