package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/** Plain JDBC helpers of the write path: null-safe binding and multi-row inserts. Stateless. */
final class Rows {

    /** Rows per multi-row INSERT of events and steps (7–9 parameters each, far below every driver's limit). */
    static final int ROWS_PER_STATEMENT = 128;

    private Rows() {
    }

    /** Binds one row's parameters from {@code index} on and returns the next free index. */
    interface RowBinder<T> {
        int bind(PreparedStatement ps, int index, T row) throws SQLException;
    }

    /**
     * Rows, up to {@link #ROWS_PER_STATEMENT} per statement, in list order: a multi-row statement
     * costs the database one statement where a JDBC batch costs one per row (only PostgreSQL's
     * driver rewrites batches by itself).
     */
    static <T> void insertRows(Connection c, List<T> rows, IntFunction<String> sqlForRows, RowBinder<T> binder)
            throws SQLException {
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

    /**
     * Events as multi-row inserts, in list order (so their ids keep each task's order; kept lean, see
     * {@link EventRows}), and the events of tasks with a status channel also into that channel's
     * outbox. Every path that records events goes through here (or, for PostgreSQL's claim, writes
     * the outbox in its own statement), so a status channel hears of every event that commits.
     *
     * @param statusChannel the status channel of each task of {@code rows} that has one (tasks without one
     *     may be absent)
     */
    static void insertEvents(Connection c, Tables t, List<TaskEvent> rows, Map<TaskId, String> statusChannel)
            throws SQLException {
        EventRows.insert(c, t, rows);
        insertOutbox(c, t, rows, statusChannel);
    }

    /** The events of {@code rows} whose task has a status channel in {@code statusChannel}, into that channel's outbox. */
    static void insertOutbox(Connection c, Tables t, List<TaskEvent> rows, Map<TaskId, String> statusChannel)
            throws SQLException {
        if (statusChannel.isEmpty()) {
            return;
        }
        List<TaskEvent> replies = new ArrayList<>();
        for (TaskEvent e : rows) {
            if (statusChannel.get(e.taskId()) != null) {
                replies.add(e);
            }
        }
        insertRows(c, replies, n -> "INSERT INTO " + t.statusOutbox()
                + " (channel, task_id, business_key, workflow, type, step_index, step_name, attempt, at, message) VALUES "
                + Dialect.valueRows(n, 10), (ps, k, e) -> {
                    ps.setString(k++, statusChannel.get(e.taskId()));
                    ps.setString(k++, e.taskId().value());
                    setString(ps, k++, e.businessKey());
                    setString(ps, k++, e.workflow());
                    ps.setString(k++, e.type().name());
                    ps.setInt(k++, e.stepIndex());
                    setString(ps, k++, e.stepName());
                    ps.setInt(k++, e.attempt());
                    ps.setLong(k++, e.at().toEpochMilli());
                    setString(ps, k++, e.message());
                    return k;
                });
    }

    /** Binds {@code values} from parameter {@code from} (1-based) on and returns the next free index. */
    static int setStrings(PreparedStatement ps, int from, Collection<String> values) throws SQLException {
        int i = from;
        for (String v : values) {
            ps.setString(i++, v);
        }
        return i;
    }

    static void setString(PreparedStatement ps, int index, String value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.VARCHAR);
        } else {
            ps.setString(index, value);
        }
    }

    static void setLong(PreparedStatement ps, int index, Long value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.BIGINT);
        } else {
            ps.setLong(index, value);
        }
    }

    static Long millisOrNull(Instant i) {
        return i == null ? null : i.toEpochMilli();
    }

    static void closeQuietly(PreparedStatement ps) {
        if (ps != null) {
            try {
                ps.close();
            } catch (SQLException ignored) {
                // the transaction's outcome is what matters; the pool resets the connection
            }
        }
    }

    /** Binds {@code values} as positional Jdbi parameters from {@code from} on. */
    static <S extends org.jdbi.v3.core.statement.SqlStatement<S>> S bindAll(S statement, int from,
            Collection<String> values) {
        int i = from;
        for (String v : values) {
            statement.bind(i++, v);
        }
        return statement;
    }
}
