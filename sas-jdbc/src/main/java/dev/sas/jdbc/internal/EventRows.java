package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.LoggerFactory;

/**
 * How events are kept in the event table, written lean and read back whole (schema V8):
 * <ul>
 *   <li>Two consecutive events of one task at the same instant, the second without a message (a
 *       step completed and the next one started, a step completed and the task ended), share one
 *       row; the second lives in the {@code then_*} columns.</li>
 *   <li>A task's RECEIVED event is not written when the task row says all it would (created_at,
 *       no step, no attempt, no message); it is read back from the task row, first.</li>
 *   <li>A task inserted already claimed (started at submit) keeps its first step's name in
 *       {@code started_step} (schema V13); its STEP_STARTED event (step 0, attempt 1, at
 *       created_at) is read back from the task row, right after the RECEIVED event.</li>
 *   <li>A claim writes no event row (schema V14): it sets the task's {@code pending_start_at}, and
 *       its STEP_STARTED (or, for a COMPENSATING task, COMPENSATION_STARTED) event, at the task's
 *       current step and attempt, is read back from the task row as the task's last event. The
 *       next change that writes events for the task (the attempt's transition, a supervisor's
 *       recovery, a cancel request) writes the start event too, in the {@code before_*} columns of
 *       its first row (or in a row of its own if it writes no event), and clears
 *       {@code pending_start_at} in the same transaction.</li>
 * </ul>
 * A one-step task so writes one event row instead of four. The single owner of this encoding: the
 * other classes hand it events to write ({@link #insert}, {@link Batch}), read events through it
 * ({@link #read}, {@link #pendingStart}) and take the task-row SQL that keeps or clears a pending
 * start from it ({@link #claimSetsPendingStart}, {@link #CLEAR_PENDING_START},
 * {@link #PENDING_START_FENCE}); none of them knows the packed column layout.
 *
 * <p>Internal switch, for measuring only ({@code docs/benchmarks.md}): with the system property
 * {@value #MODE_PROPERTY}{@code =plain} every event is written as a row of its own (RECEIVED and
 * a start at submit too, a claim's start by the claim), nothing packed; reading is the same in
 * both modes, so nodes of either mode share a database. Stateless. Not API.
 */
final class EventRows {

    /** The system property of the internal switch: {@code plain} writes every event as its own row. */
    static final String MODE_PROPERTY = "sas.jdbc.events";

    /** True unless {@link #MODE_PROPERTY} is {@code plain}: events are packed as described above. */
    static final boolean PACKED = !"plain".equalsIgnoreCase(System.getProperty(MODE_PROPERTY, "packed").trim());

    static {
        if (!PACKED) {
            LoggerFactory.getLogger("dev.sas.jdbc.JdbcStateStore").warn("{}=plain: every event is written as a row"
                    + " of its own (an internal switch for measuring, not a setting)", MODE_PROPERTY);
        }
    }

    /**
     * A row of the event table: an event, the start event that precedes it in the same row or null,
     * and the event that follows it in the same row or null.
     */
    private record Row(TaskEvent before, TaskEvent event, TaskEvent then) {
    }

    /** Task-row SQL: clears the start a claim left pending (its writer writes it as an event). */
    static final String CLEAR_PENDING_START = "pending_start_at = NULL";

    /** Task-row SQL: the pending start's time as a fence compares it, -1 for none ({@link #fenceValue}). */
    static final String PENDING_START_FENCE = "COALESCE(pending_start_at, -1)";

    private EventRows() {
    }

    /**
     * Task-row SQL for a claim's update (one {@code ?}, bound to {@link #claimPendingStartAt}):
     * leaves the claim's start pending in the row, unless the claim starts no step (see
     * {@link Dialect#claimedStart}) or events are not packed.
     */
    static String claimSetsPendingStart(String cancelColumn, String stateColumn) {
        return "pending_start_at = " + Dialect.claimedStart(cancelColumn, stateColumn);
    }

    /** The value of {@link #claimSetsPendingStart}'s parameter for a claim at {@code now}. */
    static Long claimPendingStartAt(long now) {
        return PACKED ? Long.valueOf(now) : null;
    }

    /**
     * True if a claim writes its start events as rows (not packed): {@link Claims} hands them to
     * {@link #insert} in the claim's transaction.
     */
    static boolean claimWritesStarts() {
        return !PACKED;
    }

    /** Task-row column of a task inserted claimed: its first step's name when its start is read from the row. */
    static final String STARTED_STEP = "started_step";

    /**
     * The {@link #STARTED_STEP} value of a task inserted claimed: {@code firstStepName} when its
     * RECEIVED event is implied by the row ({@code startImplied}, see {@link #impliedByTaskRow}),
     * whose STEP_STARTED event is then read from the row too; else null (both are written as events).
     */
    static String startedStep(boolean startImplied, String firstStepName) {
        return startImplied ? firstStepName : null;
    }

    /** A pending start's time as {@link #PENDING_START_FENCE} compares it: -1 for none. */
    static long fenceValue(TaskEvent start) {
        return start == null ? -1 : start.at().toEpochMilli();
    }

    /**
     * The RECEIVED event a task row stands for, as every client writes it (see
     * {@code SasClient}): no step (-1), no attempt, no message, at the task's creation.
     */
    static TaskEvent received(TaskId taskId, String businessKey, String workflow, long createdAt) {
        return new TaskEvent(taskId, businessKey, workflow, TaskEvent.Type.RECEIVED, -1, null, 0,
                Instant.ofEpochMilli(createdAt), null);
    }

    /**
     * The STEP_STARTED event of a task inserted already claimed (started at submit), as its claim
     * would have recorded it: step 0, attempt 1, at the task's creation. The task row keeps it
     * ({@code started_step}) when its RECEIVED event is read from the row too.
     */
    static TaskEvent startedAtSubmit(TaskId taskId, String businessKey, String workflow, String firstStepName,
            Instant createdAt) {
        return new TaskEvent(taskId, businessKey, workflow, TaskEvent.Type.STEP_STARTED, 0, firstStepName, 1,
                createdAt, null);
    }

    /**
     * The start event a claim records for a task it left in {@code status} at {@code step} and
     * {@code attempt} (the claim's view): COMPENSATION_STARTED for a compensating task, else
     * STEP_STARTED.
     */
    static TaskEvent started(TaskId taskId, String businessKey, String workflow, TaskStatus status,
            int step, String stepName, int attempt, long at) {
        return new TaskEvent(taskId, businessKey, workflow, status == TaskStatus.COMPENSATING
                ? TaskEvent.Type.COMPENSATION_STARTED : TaskEvent.Type.STEP_STARTED, step, stepName, attempt,
                Instant.ofEpochMilli(at), null);
    }

    /** The task columns {@link #pendingStart} reads, in order. */
    static final String PENDING_START_COLUMNS = "business_key, workflow, state, current_step, current_step_name,"
            + " attempt, pending_start_at";

    /**
     * The start event a claim left pending in a task row, from {@link #PENDING_START_COLUMNS} read
     * at column {@code from} on, or null if the row has none.
     */
    static TaskEvent pendingStart(TaskId taskId, ResultSet rs, int from) throws SQLException {
        long at = rs.getLong(from + 6);
        return rs.wasNull() ? null : started(taskId, rs.getString(from), rs.getString(from + 1),
                TaskStatus.valueOf(rs.getString(from + 2)), rs.getInt(from + 3), rs.getString(from + 4),
                rs.getInt(from + 5), at);
    }

    /**
     * The start events that claims left pending in the rows of the tasks {@code ids} (distinct, not
     * empty), by task id; tasks without one are absent. One select, without a lock.
     */
    static Map<String, TaskEvent> pendingStarts(Connection c, StoreContext db, List<String> ids) throws SQLException {
        Map<String, TaskEvent> starts = new HashMap<>();
        boolean array = db.dialect().bindsArrays();
        try (PreparedStatement ps = c.prepareStatement("SELECT task_id, " + PENDING_START_COLUMNS
                + " FROM " + db.t().task() + " WHERE "
                + (array ? "task_id = ANY(?::varchar[])" : "task_id IN (" + Dialect.placeholders(ids.size()) + ")")
                + " AND pending_start_at IS NOT NULL")) {
            if (array) {
                ps.setArray(1, c.createArrayOf("varchar", ids.toArray()));
            } else {
                Rows.setStrings(ps, 1, ids);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String id = rs.getString(1);
                    starts.put(id, pendingStart(TaskId.of(id), rs, 2));
                }
            }
        }
        return starts;
    }

    /**
     * True if {@code e} is the RECEIVED event its task row already tells (so it need not be written;
     * never when events are not packed). A submit started at once keeps its STEP_STARTED event in
     * the row ({@code started_step}) exactly when its RECEIVED event is implied.
     */
    static boolean impliedByTaskRow(TaskEvent e, Instant createdAt) {
        return PACKED && e.type() == TaskEvent.Type.RECEIVED && e.stepIndex() == -1 && e.stepName() == null
                && e.attempt() == 0 && e.message() == null && e.at().equals(createdAt);
    }

    /** The rows that keep {@code events}, in order: packed ({@code packed}) or one per event. */
    private static List<Row> pack(List<TaskEvent> events, boolean packed) {
        List<Row> rows = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            TaskEvent e = events.get(i);
            TaskEvent next = i + 1 < events.size() ? events.get(i + 1) : null;
            if (packed && next != null && next.message() == null && next.taskId().equals(e.taskId())
                    && next.at().equals(e.at()) && Objects.equals(next.businessKey(), e.businessKey())
                    && Objects.equals(next.workflow(), e.workflow())) {
                rows.add(new Row(null, e, next));
                i++;
            } else {
                rows.add(new Row(null, e, null));
            }
        }
        return rows;
    }

    /**
     * The rows that keep {@code events} of one task, after its pending start event {@code start}
     * (or null): packed, the start shares the first row, or has a row of its own if there is no
     * event; else each has a row of its own.
     */
    private static List<Row> packAfter(TaskEvent start, List<TaskEvent> events, boolean packed) {
        List<Row> rows = pack(events, packed);
        if (start == null) {
            return rows;
        }
        if (rows.isEmpty() || !packed) {
            rows.add(0, new Row(null, start, null));
            return rows;
        }
        Row first = rows.get(0);
        rows.set(0, new Row(start, first.event(), first.then()));
        return rows;
    }

    /**
     * The events of one write, task by task, each after the start its claim left pending: written
     * in the order added by {@link #insert(Connection, Tables, boolean)}. Not thread-safe.
     */
    static final class Batch {

        private final List<Row> rows = new ArrayList<>();

        /** Adds the events of one task, after the start its claim left pending in the task row ({@code start}, or null). */
        void add(TaskEvent start, List<TaskEvent> events) {
            rows.addAll(packAfter(start, events, PACKED));
        }

        /** Inserts the rows, in order, from arrays where {@code arrays} ({@link Dialect#bindsArrays}). */
        void insert(Connection c, Tables t, boolean arrays) throws SQLException {
            insertRows(c, t, rows, arrays);
        }
    }

    /** Inserts {@code events} of one task after its pending start {@code start} (or null), in order. */
    static void insertAfter(Connection c, Tables t, TaskEvent start, List<TaskEvent> events) throws SQLException {
        insertRows(c, t, packAfter(start, events, PACKED));
    }

    /** Inserts {@code events} as multi-row inserts, in list order (so their ids keep each task's order). */
    static void insert(Connection c, Tables t, List<TaskEvent> events) throws SQLException {
        insertRows(c, t, pack(events, PACKED));
    }

    /** {@link #insert}, from arrays where {@code arrays} ({@link Dialect#bindsArrays}). */
    static void insert(Connection c, Tables t, List<TaskEvent> events, boolean arrays) throws SQLException {
        insertRows(c, t, pack(events, PACKED), arrays);
    }

    /** The event table's columns as {@link #insertRows} writes them. */
    private static final String INSERT_COLUMNS = "task_id, type, step_index, step_name, attempt, at, message,"
            + " then_type, then_step_index, then_step_name, then_attempt, before_type, before_step_index,"
            + " before_step_name, before_attempt, before_at";

    /** Their array element types ({@link ArrayColumns}), in the same order. */
    private static final String[] INSERT_TYPES = {"varchar", "varchar", "int4", "varchar", "int4", "int8", "text",
        "varchar", "int4", "varchar", "int4", "varchar", "int4", "varchar", "int4", "int8"};

    /** After the table name: the insert from one array per column, in list order (the ordinality). */
    private static final String FROM_ARRAYS;

    static {
        StringBuilder names = new StringBuilder();
        for (int j = 0; j < INSERT_TYPES.length; j++) {
            names.append("c").append(j).append(", ");
        }
        FROM_ARRAYS = " (" + INSERT_COLUMNS + ") SELECT " + names.substring(0, names.length() - 2) + " FROM "
                + ArrayColumns.unnest(INSERT_TYPES) + " WITH ORDINALITY AS u(" + names + "n) ORDER BY n";
    }

    /** Inserts {@code rows} as multi-row inserts, in list order (so their ids keep each task's order). */
    private static void insertRows(Connection c, Tables t, List<Row> rows) throws SQLException {
        Rows.insertRows(c, rows, n -> "INSERT INTO " + t.event() + " (" + INSERT_COLUMNS + ") VALUES "
                + Dialect.valueRows(n, INSERT_TYPES.length),
                (ps, k, r) -> ArrayColumns.bindRow(ps, k, values(r), INSERT_TYPES));
    }

    /**
     * Inserts {@code rows} in list order, as {@link #insertRows} does, from one array per column
     * where {@code arrays} (the dialect {@link Dialect#bindsArrays}) and there is more than one.
     */
    private static void insertRows(Connection c, Tables t, List<Row> rows, boolean arrays) throws SQLException {
        if (!arrays || rows.size() < 2) {
            insertRows(c, t, rows);
            return;
        }
        ArrayColumns columns = new ArrayColumns(rows.size(), INSERT_TYPES);
        for (int k = 0; k < rows.size(); k++) {
            columns.setRow(k, values(rows.get(k)));
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t.event() + FROM_ARRAYS)) {
            columns.bind(c, ps, 1);
            ps.executeUpdate();
        }
    }

    /** A row's values, in {@link #INSERT_COLUMNS} order. */
    private static Object[] values(Row r) {
        TaskEvent e = r.event();
        TaskEvent then = r.then();
        TaskEvent before = r.before();
        return new Object[] {e.taskId().value(), e.type().name(), e.stepIndex(), e.stepName(), e.attempt(),
            e.at().toEpochMilli(), e.message(),
            then == null ? null : then.type().name(), then == null ? null : then.stepIndex(),
            then == null ? null : then.stepName(), then == null ? null : then.attempt(),
            before == null ? null : before.type().name(), before == null ? null : before.stepIndex(),
            before == null ? null : before.stepName(), before == null ? null : before.attempt(),
            before == null ? null : before.at().toEpochMilli()};
    }

    /** The columns {@link #read} expects, from the task {@code t} and its events {@code e} (left-joined). */
    static final String COLUMNS = "t.business_key, t.workflow, t.created_at, e.type, e.step_index, e.step_name,"
            + " e.attempt, e.at, e.message, e.then_type, e.then_step_index, e.then_step_name, e.then_attempt,"
            + " t.started_step, e.before_type, e.before_step_index, e.before_step_name, e.before_attempt, e.before_at,"
            + " t.pending_start_at, t.state, t.current_step, t.current_step_name, t.attempt";

    /**
     * A task's events from rows of {@link #COLUMNS} in event order (the task row LEFT JOINed to its
     * events, so a task without event rows gives one row with null event columns): its RECEIVED
     * event first, read from the task row unless it was written (and then its start at submit, if
     * the row keeps one), then each row's event(s), then the start event the task row keeps pending,
     * if any.
     */
    static List<TaskEvent> read(TaskId taskId, ResultSet rs) throws SQLException {
        List<TaskEvent> events = new ArrayList<>();
        TaskEvent pending = null;
        while (rs.next()) {
            String key = rs.getString(1);
            String workflow = rs.getString(2);
            String type = rs.getString(4);
            if (events.isEmpty() && !TaskEvent.Type.RECEIVED.name().equals(type)) {
                events.add(received(taskId, key, workflow, rs.getLong(3)));
                String startedStep = rs.getString(14);
                if (startedStep != null) {
                    events.add(startedAtSubmit(taskId, key, workflow, startedStep, Instant.ofEpochMilli(rs.getLong(3))));
                }
            }
            long pendingAt = rs.getLong(20);
            if (pending == null && !rs.wasNull()) {
                pending = started(taskId, key, workflow, TaskStatus.valueOf(rs.getString(21)), rs.getInt(22),
                        rs.getString(23), rs.getInt(24), pendingAt);
            }
            if (type == null) {
                continue;
            }
            String before = rs.getString(15);
            if (before != null) {
                events.add(new TaskEvent(taskId, key, workflow, TaskEvent.Type.valueOf(before), rs.getInt(16),
                        rs.getString(17), rs.getInt(18), Instant.ofEpochMilli(rs.getLong(19)), null));
            }
            Instant at = Instant.ofEpochMilli(rs.getLong(8));
            events.add(new TaskEvent(taskId, key, workflow, TaskEvent.Type.valueOf(type), rs.getInt(5),
                    rs.getString(6), rs.getInt(7), at, rs.getString(9)));
            String then = rs.getString(10);
            if (then != null) {
                events.add(new TaskEvent(taskId, key, workflow, TaskEvent.Type.valueOf(then), rs.getInt(11),
                        rs.getString(12), rs.getInt(13), at, null));
            }
        }
        if (pending != null) {
            events.add(pending);
        }
        return events;
    }
}
