package dev.sas.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import org.jdbi.v3.core.Handle;

/**
 * Runs a submission in the right transaction: one of the store's own when there is no host
 * transaction, the host's when it passes a {@link Connection} or a Jdbi {@link Handle} in a
 * transaction, and a short one of its own on a host connection in auto-commit mode (which is in
 * no transaction, yet the task rows and their events must commit together). The store never
 * commits, rolls back or closes a host transaction. Plain JDBC on the connection, like the rest of
 * the write path. Thread-safe.
 */
final class HostTransactions {

    /** Work on a connection inside a transaction. */
    interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    private final StoreContext db;

    HostTransactions(StoreContext db) {
        this.db = db;
    }

    /**
     * Checks that the store can join {@code transaction} (null, a {@link Connection} or a {@link Handle}).
     *
     * @throws IllegalArgumentException naming the type and {@code what} otherwise
     */
    static void checkJoinable(Object transaction, String what) {
        if (transaction != null && !(transaction instanceof Connection) && !(transaction instanceof Handle)) {
            throw new IllegalArgumentException("cannot join a transaction of type " + transaction.getClass().getName()
                    + " for " + what + ": pass a java.sql.Connection, an org.jdbi.v3.core.Handle, or null");
        }
    }

    /**
     * Runs {@code work} in {@code transaction} (see the class comment). On failure a transaction
     * this method began is rolled back; a host's is left for the host to roll back.
     *
     * @throws SQLException or a Jdbi exception if the database fails
     */
    <T> T inTransaction(Object transaction, String what, Work<T> work) throws SQLException {
        checkJoinable(transaction, what);
        if (transaction == null) {
            return db.jdbi().inTransaction(h -> work.run(h.getConnection()));
        }
        Connection c = transaction instanceof Handle h ? h.getConnection() : (Connection) transaction;
        return c.getAutoCommit() ? inOwnTransaction(c, work) : work.run(c);
    }

    private static <T> T inOwnTransaction(Connection c, Work<T> work) throws SQLException {
        c.setAutoCommit(false);
        try {
            T result = work.run(c);
            c.commit();
            return result;
        } catch (SQLException | RuntimeException | Error e) {
            try {
                c.rollback();
            } catch (SQLException r) {
                e.addSuppressed(r);
            }
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }
}
