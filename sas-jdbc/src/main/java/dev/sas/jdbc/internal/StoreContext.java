package dev.sas.jdbc.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.StoreUnavailableException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;

/**
 * What every part of the store shares: the Jdbi that owns connections and transactions, the
 * dialect, the table names, and the one place where database errors become
 * {@link StateStoreException}s: a {@link StoreUnavailableException} for an error that passes by
 * itself (see {@link StoreErrors}), which the runtime retries and never blames on a task. When the
 * database says it is read-only (a primary demoted in a failover), {@code onReadOnly} runs: the
 * store's own pool then drops its connections, whose server will not take writes again, and the
 * driver finds the new primary. Immutable and thread-safe.
 *
 * <p>Access style: Jdbi opens connections and runs transactions everywhere. Statements go through
 * Jdbi, except on the write path ({@link Submits}, {@link TransitionWriter} and the event writer in
 * {@link Rows}), which binds plain JDBC on the transaction's connection: binding through Jdbi cost
 * more CPU per row there than the database spent on the row.
 */
record StoreContext(Jdbi jdbi, Dialect dialect, Tables t, Runnable onReadOnly) {

    StoreContext(Jdbi jdbi, Dialect dialect, Tables t) {
        this(jdbi, dialect, t, () -> { });
    }

    /** Runs {@code body}, turning a database failure into a {@link StateStoreException} naming the operation. */
    <T> T run(String operation, Object taskId, Supplier<T> body) {
        try {
            return body.get();
        } catch (JdbiException e) {
            throw failed(operation, taskId, e);
        } catch (StoreUnavailableException e) {
            throw e;
        } catch (StateStoreException e) {
            throw classified(e);
        }
    }

    /** The exception for a failed {@code operation} (on {@code taskId}, if not null). */
    StateStoreException failed(String operation, Object taskId, Exception e) {
        return classified(new StateStoreException(operation + " failed" + (taskId == null ? "" : " for task " + taskId)
                + " on " + dialect.name() + ": " + rootMessage(e), e));
    }

    /**
     * {@code e} as a {@link StoreUnavailableException} if its cause is a database error that passes
     * by itself, otherwise {@code e}; a read-only error also runs {@code onReadOnly}.
     */
    StateStoreException classified(StateStoreException e) {
        if (e instanceof StoreUnavailableException || !StoreErrors.isTransient(e)) {
            return e;
        }
        if (StoreErrors.isReadOnly(e)) {
            onReadOnly.run();
        }
        return new StoreUnavailableException(e.getMessage(), e.getCause());
    }

    /**
     * Records {@code events} on the transaction of {@code h} through the write path's event writer,
     * with the events of tasks that have a status channel in its outbox too.
     *
     * @param statusChannel the status channel of each task that has one (see {@link Rows#insertEvents})
     */
    void recordEvents(Handle h, List<TaskEvent> events, Map<TaskId, String> statusChannel) {
        onConnection(h, "recording " + events.size() + " event(s)", c -> Rows.insertEvents(c, t, events, statusChannel));
    }

    /** Records {@code events} only in the outboxes of their tasks' status channels, on the transaction of {@code h}. */
    void recordStatusUpdates(Handle h, List<TaskEvent> events, Map<TaskId, String> statusChannel) {
        onConnection(h, "recording " + events.size() + " status update(s)",
                c -> Rows.insertOutbox(c, t, events, statusChannel));
    }

    /** Plain JDBC work on a connection. */
    interface ConnectionWork {
        void run(Connection c) throws SQLException;
    }

    /** Runs {@code work} on the connection of {@code h}, a failure becoming a {@link StateStoreException} naming {@code what}. */
    void onConnection(Handle h, String what, ConnectionWork work) {
        try {
            work.run(h.getConnection());
        } catch (SQLException e) {
            throw classified(new StateStoreException(what + " failed on " + dialect.name() + ": " + rootMessage(e), e));
        }
    }

    /** The innermost cause's class and message. */
    static String rootMessage(Throwable e) {
        Throwable c = e;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c.getClass().getSimpleName() + ": " + c.getMessage();
    }

    /**
     * The database's data error in {@code e} or its causes (SQLState class 22: a value too long, an
     * encoding the database refuses, a number out of range), or null. Such an error is caused by a
     * value, not by the database being unwell: writing it again fails again.
     */
    static SQLException dataError(Throwable e) {
        for (Throwable c = e; c != null && c.getCause() != c; c = c.getCause()) {
            if (c instanceof SQLException s) {
                for (SQLException n = s; n != null; n = n.getNextException()) {
                    if (n.getSQLState() != null && n.getSQLState().startsWith("22")) {
                        return n;
                    }
                }
            }
        }
        return null;
    }

    /** The first line of a driver's message (PostgreSQL adds the statement and position on later lines). */
    static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }

    /** True if {@code e} (or a cause) says a value does not fit its column (SQLState 22001). */
    static boolean isValueTooLong(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof SQLException s && "22001".equals(s.getSQLState())) {
                return true;
            }
        }
        return false;
    }
}
