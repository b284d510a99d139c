package dev.sas.jdbc.internal;

import static dev.sas.jdbc.internal.Rows.setString;

import dev.sas.core.spi.NewTask;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The INSERT of new task rows for {@link Submits}: one multi-row statement per chunk (or, for a
 * large chunk where the database can, one from arrays), saying which rows it inserted and which
 * were duplicates. Plain JDBC (the write path). Thread-safe.
 */
final class TaskInserts {

    /**
     * Rows from which a chunk is inserted from arrays where the dialect can
     * ({@link #insertFromArrays}: a plain INSERT in a savepoint first); smaller ones, single
     * submits above all, would pay more for the savepoint's two round trips than they save.
     */
    static final int ARRAY_INSERT_FROM = 32;
    /**
     * How the tasks of a submit are inserted claimed.
     *
     * @param instanceId the instance that holds them
     * @param startImplied their RECEIVED events are read from the task rows, and so are their
     *     STEP_STARTED events (schema V13: {@code started_step}); else both are written as events
     */
    record Claim(String instanceId, boolean startImplied) {
    }

    private final StoreContext db;
    /** The dialect's insert from arrays, plain and skipping duplicates; null where it has none. */
    private final String insertArraysSql;
    private final String insertArraysSkippingSql;

    TaskInserts(StoreContext db) {
        this.db = db;
        this.insertArraysSql = db.dialect().insertTaskArraysSql(db.t(), false);
        this.insertArraysSkippingSql = db.dialect().insertTaskArraysSql(db.t(), true);
    }

    /**
     * Inserts the rows in one statement and says which were inserted. Where the dialect's insert
     * fails on a duplicate rather than skipping it (H2, MariaDB: the statement is undone, the
     * transaction goes on), the rows are inserted one at a time to find the duplicates.
     */
    boolean[] insert(Connection c, List<NewTask> rows, Claim claim) throws SQLException {
        if (rows.size() >= ARRAY_INSERT_FROM && claim == null && insertArraysSql != null) {
            return insertFromArrays(c, rows);
        }
        boolean[] inserted = new boolean[rows.size()];
        try (PreparedStatement ps = c.prepareStatement(db.dialect().insertTasksSql(db.t(), rows.size(),
                claim != null))) {
            bind(ps, rows, claim);
            if (db.dialect().insertTasksReturnsIds()) {
                return insertedOf(ps, rows);
            }
            int count = ps.executeUpdate();
            if (count != rows.size()) {
                throw new IllegalStateException("the insert of " + rows.size() + " task rows reported " + count
                        + "; a dialect must insert all rows or fail on a duplicate");
            }
            Arrays.fill(inserted, true);
            return inserted;
        } catch (SQLException e) {
            if (!db.dialect().isDuplicateKey(e)) {
                throw e;
            }
            if (rows.size() > 1) {
                for (int k = 0; k < rows.size(); k++) {
                    inserted[k] = insert(c, List.of(rows.get(k)), claim)[0];
                }
            }
            return inserted;
        }
    }

    /**
     * A large chunk where the database inserts from arrays (PostgreSQL). The plain INSERT first, in
     * a savepoint, since {@code ON CONFLICT … RETURNING} cost the server a third more per row (a
     * speculative insertion and a result row each); a duplicate rolls back to the savepoint and the
     * INSERT that skips duplicates and returns the ids it inserted follows.
     */
    private boolean[] insertFromArrays(Connection c, List<NewTask> rows) throws SQLException {
        boolean[] inserted = new boolean[rows.size()];
        Savepoint before = c.setSavepoint();
        try (PreparedStatement ps = c.prepareStatement(insertArraysSql)) {
            bindArrays(c, ps, rows);
            ps.executeUpdate();
            c.releaseSavepoint(before);
            Arrays.fill(inserted, true);
            return inserted;
        } catch (SQLException e) {
            if (!db.dialect().isDuplicateKey(e)) {
                throw e;
            }
            c.rollback(before);
        }
        try (PreparedStatement ps = c.prepareStatement(insertArraysSkippingSql)) {
            bindArrays(c, ps, rows);
            return insertedOf(ps, rows);
        }
    }

    /** Runs an insert that returns the ids it inserted, and says which of {@code rows} it inserted. */
    private static boolean[] insertedOf(PreparedStatement ps, List<NewTask> rows) throws SQLException {
        Set<String> ids = new HashSet<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        boolean[] inserted = new boolean[rows.size()];
        for (int k = 0; k < rows.size(); k++) {
            inserted[k] = ids.contains(rows.get(k).taskId().value());
        }
        return inserted;
    }

    /** Binds {@code rows} for {@link Dialect#insertTaskArraysSql}: one array per column. */
    private static void bindArrays(Connection c, PreparedStatement ps, List<NewTask> rows) throws SQLException {
        ArrayColumns columns = new ArrayColumns(rows.size(), "varchar", "varchar", "int4", "varchar", "int4", "int8",
                "varchar", "int8", "int8", "text", "varchar", "varchar");
        for (int k = 0; k < rows.size(); k++) {
            NewTask task = rows.get(k);
            columns.setRow(k, new Object[] {task.taskId().value(), task.workflow(), task.workflowVersion(),
                task.businessKey(), task.priority(), task.dueAt().toEpochMilli(), task.firstStepName(),
                task.firstStepTimeout().toMillis(), task.createdAt().toEpochMilli(), task.input(), task.statusChannel(),
                task.traceContext()});
        }
        columns.bind(c, ps, 1);
    }

    /** Binds {@code rows} for {@link Dialect#insertTasksSql}, claimed as {@code claim} says unless it is null. */
    private static void bind(PreparedStatement ps, List<NewTask> rows, Claim claim) throws SQLException {
        int k = 1;
        for (NewTask task : rows) {
            ps.setString(k++, task.taskId().value());
            ps.setString(k++, task.workflow());
            ps.setInt(k++, task.workflowVersion());
            ps.setString(k++, task.businessKey());
            ps.setInt(k++, task.priority());
            ps.setLong(k++, task.dueAt().toEpochMilli());
            ps.setString(k++, task.firstStepName());
            ps.setLong(k++, task.firstStepTimeout().toMillis());
            ps.setLong(k++, task.createdAt().toEpochMilli());
            ps.setLong(k++, task.createdAt().toEpochMilli());
            ps.setString(k++, task.input());
            setString(ps, k++, task.statusChannel());
            setString(ps, k++, task.traceContext());
            if (claim != null) {
                ps.setString(k++, claim.instanceId());
                ps.setLong(k++, task.createdAt().plus(task.firstStepTimeout()).toEpochMilli());
                setString(ps, k++, EventRows.startedStep(claim.startImplied(), task.firstStepName()));
            }
        }
    }
}
