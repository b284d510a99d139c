package dev.sas.jdbc.internal;

import static dev.sas.jdbc.internal.Rows.setString;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

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
 * </ul>
 * A one-step task so writes two event rows instead of four. Stateless. Not API.
 */
final class EventRows {

    /** A row of the event table: an event, and the one that shares its row, or null. */
    record Row(TaskEvent event, TaskEvent then) {
    }

    private EventRows() {
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

    /** True if {@code e} is the RECEIVED event its task row already tells (so it need not be written). */
    static boolean impliedByTaskRow(TaskEvent e, Instant createdAt) {
        return e.type() == TaskEvent.Type.RECEIVED && e.stepIndex() == -1 && e.stepName() == null
                && e.attempt() == 0 && e.message() == null && e.at().equals(createdAt);
    }

    /** The rows that keep {@code events}, in order. */
    static List<Row> pack(List<TaskEvent> events) {
        List<Row> rows = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            TaskEvent e = events.get(i);
            TaskEvent next = i + 1 < events.size() ? events.get(i + 1) : null;
            if (next != null && next.message() == null && next.taskId().equals(e.taskId())
                    && next.at().equals(e.at()) && Objects.equals(next.businessKey(), e.businessKey())
                    && Objects.equals(next.workflow(), e.workflow())) {
                rows.add(new Row(e, next));
                i++;
            } else {
                rows.add(new Row(e, null));
            }
        }
        return rows;
    }

    /** Inserts {@code events} as multi-row inserts, in list order (so their ids keep each task's order). */
    static void insert(Connection c, Tables t, List<TaskEvent> events) throws SQLException {
        Rows.insertRows(c, pack(events), n -> "INSERT INTO " + t.event()
                + " (task_id, type, step_index, step_name, attempt, at, message, then_type, then_step_index,"
                + " then_step_name, then_attempt) VALUES " + Dialect.valueRows(n, 11),
                (ps, k, r) -> {
                    TaskEvent e = r.event();
                    ps.setString(k++, e.taskId().value());
                    ps.setString(k++, e.type().name());
                    ps.setInt(k++, e.stepIndex());
                    setString(ps, k++, e.stepName());
                    ps.setInt(k++, e.attempt());
                    ps.setLong(k++, e.at().toEpochMilli());
                    setString(ps, k++, e.message());
                    TaskEvent then = r.then();
                    setString(ps, k++, then == null ? null : then.type().name());
                    setInt(ps, k++, then == null ? null : then.stepIndex());
                    setString(ps, k++, then == null ? null : then.stepName());
                    setInt(ps, k++, then == null ? null : then.attempt());
                    return k;
                });
    }

    /** The columns {@link #read} expects, from the task {@code t} and its events {@code e} (left-joined). */
    static final String COLUMNS = "t.business_key, t.workflow, t.created_at, e.type, e.step_index, e.step_name,"
            + " e.attempt, e.at, e.message, e.then_type, e.then_step_index, e.then_step_name, e.then_attempt,"
            + " t.started_step";

    /**
     * A task's events from rows of {@link #COLUMNS} in event order (the task row LEFT JOINed to its
     * events, so a task without event rows gives one row with null event columns): its RECEIVED
     * event first, read from the task row unless it was written (and then its start at submit, if
     * the row keeps one), then each row's event(s).
     */
    static List<TaskEvent> read(TaskId taskId, ResultSet rs) throws SQLException {
        List<TaskEvent> events = new ArrayList<>();
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
            if (type == null) {
                continue;
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
        return events;
    }

    private static void setInt(PreparedStatement ps, int index, Integer value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.INTEGER);
        } else {
            ps.setInt(index, value);
        }
    }
}
