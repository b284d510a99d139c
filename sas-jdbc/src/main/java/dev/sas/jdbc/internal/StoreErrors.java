package dev.sas.jdbc.internal;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;

/**
 * Tells a database error that says nothing about the operation (the database is away, failing
 * over, read-only for now, or busy) from one caused by it (a value, a constraint, SQL). The first
 * kind is retried by the runtime and never fails or parks a task. Stateless. Not API.
 */
final class StoreErrors {

    /**
     * SQLStates of errors that pass: connection exceptions (class 08), insufficient resources
     * (class 53), shutting down, crashed or starting (57P01-57P03), a statement or lock time-out
     * (57014, 55P03), a read-only transaction on a demoted primary (25006), a serialization
     * failure or deadlock (40001, 40P01).
     */
    private static final Set<String> STATES = Set.of("57P01", "57P02", "57P03", "57014", "55P03", "25006", "40001",
            "40P01");
    /**
     * MariaDB/MySQL error codes of the same kind whose SQLState is the catch-all HY000: read-only
     * server or transaction (1290, 1792, 1836), lock wait time-out (1205), connection killed (1927),
     * server shutting down (1053).
     */
    private static final Set<Integer> MARIADB_CODES = Set.of(1290, 1792, 1836, 1205, 1927, 1053);
    /** MariaDB/MySQL codes that say the server is read-only. */
    private static final Set<Integer> MARIADB_READ_ONLY = Set.of(1290, 1792, 1836);

    private StoreErrors() {
    }

    /** True if {@code e} or a cause is a database error that passes by itself (see the class comment). */
    static boolean isTransient(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SQLException s) {
                for (SQLException n = s; n != null; n = n.getNextException()) {
                    if (transientOne(n)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** True if {@code e} or a cause says the server takes no writes (a primary demoted to a standby). */
    static boolean isReadOnly(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SQLException s) {
                for (SQLException n = s; n != null; n = n.getNextException()) {
                    if ("25006".equals(n.getSQLState()) || MARIADB_READ_ONLY.contains(n.getErrorCode())
                            && "HY000".equals(n.getSQLState())) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private static boolean transientOne(SQLException e) {
        String state = e.getSQLState();
        if (state != null && (state.startsWith("22") || state.startsWith("23"))) {
            return false; // a value or a constraint: writing it again fails again
        }
        if (e instanceof SQLTransientException || e instanceof SQLRecoverableException
                || e instanceof SQLNonTransientConnectionException) {
            return true;
        }
        if (state == null) {
            return false;
        }
        return state.startsWith("08") || state.startsWith("53") || STATES.contains(state)
                || "HY000".equals(state) && MARIADB_CODES.contains(e.getErrorCode());
    }
}
