package dev.sas.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.spi.JdbiPlugin;

/** Isolation levels of connections from a data source the host hands in. Not API. */
public final class Isolation {

    private Isolation() {
    }

    /**
     * For a data source the host hands in whose connections are not at READ COMMITTED (MariaDB's
     * default is REPEATABLE READ, whose gap locks make claims 1.4–1.7× slower): puts each
     * connection at READ COMMITTED while SAS uses it and back to {@code hostLevel} when SAS returns
     * it, so the host's own use of its pool is unchanged. Costs one statement per use each way;
     * configuring the pool at READ COMMITTED avoids it.
     */
    public static JdbiPlugin readCommitted(int hostLevel) {
        return new JdbiPlugin() {
            @Override
            public Handle customizeHandle(Handle handle) throws SQLException {
                Connection c = handle.getConnection();
                c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                handle.addCleanable(() -> c.setTransactionIsolation(hostLevel));
                return handle;
            }
        };
    }

    /** The JDBC name of an isolation level, for messages. */
    public static String isolationName(int level) {
        return switch (level) {
            case Connection.TRANSACTION_NONE -> "NONE";
            case Connection.TRANSACTION_READ_UNCOMMITTED -> "READ UNCOMMITTED";
            case Connection.TRANSACTION_READ_COMMITTED -> "READ COMMITTED";
            case Connection.TRANSACTION_REPEATABLE_READ -> "REPEATABLE READ";
            case Connection.TRANSACTION_SERIALIZABLE -> "SERIALIZABLE";
            default -> "level " + level;
        };
    }

}
