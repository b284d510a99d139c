package dev.sas.jdbc;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sas.jdbc.internal.Dialects;
import dev.sas.testing.contracts.StateStoreContract;
import dev.sas.jdbc.internal.SchemaManager;
import dev.sas.jdbc.internal.Tables;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/** The databases tests run on, each test with its own random table prefix. */
enum TestDb {
    H2_MEMORY(null),
    H2_FILE(null),
    POSTGRES("SAS_TEST_POSTGRES_URL"),
    MARIADB("SAS_TEST_MARIADB_URL");

    private final String env;

    TestDb(String env) {
        this.env = env;
    }

    /** The URL, or skips the test when the database is not configured. */
    String url() {
        return switch (this) {
            case H2_MEMORY -> "jdbc:h2:mem:sas-" + randomLetters(10);
            case H2_FILE -> "jdbc:h2:file:./target/h2-test/sas;LOCK_TIMEOUT=10000";
            default -> {
                String url = System.getenv(env);
                assumeTrue(url != null && !url.isBlank(), env + " not set: skipping " + this + " tests");
                if (!url.contains("127.0.0.1") && !url.contains("localhost")) {
                    throw new IllegalStateException(env + " must point at 127.0.0.1; tests create and drop tables");
                }
                yield url;
            }
        };
    }

    /**
     * Terminates every PostgreSQL backend whose application_name is {@code applicationName} (a
     * pool's name), as a network drop or server restart would.
     *
     * @return how many backends were terminated
     */
    static int killPostgresConnections(String url, String applicationName) throws SQLException {
        try (Connection c = DriverManager.getConnection(url);
                java.sql.PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        + " WHERE pid <> pg_backend_pid() AND application_name = ?")) {
            ps.setString(1, applicationName);
            int killed = 0;
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    killed++;
                }
            }
            return killed;
        }
    }

    /** DDL that makes {@code table}'s {@code input} column hold at most {@code chars} characters. */
    String shrinkInputColumnSql(String table, int chars) {
        return switch (this) {
            case H2_MEMORY, H2_FILE -> "ALTER TABLE " + table + " ALTER COLUMN input SET DATA TYPE VARCHAR(" + chars + ")";
            case POSTGRES -> "ALTER TABLE " + table + " ALTER COLUMN input TYPE VARCHAR(" + chars + ")";
            case MARIADB -> "ALTER TABLE " + table + " MODIFY input VARCHAR(" + chars + ") NOT NULL";
        };
    }

    /** A host transaction on a connection of its own to {@code url}, for the contract's joining tests. */
    static StateStoreContract.HostTransaction hostTransaction(String url) throws SQLException {
        Connection c = DriverManager.getConnection(url);
        c.setAutoCommit(false);
        return new StateStoreContract.HostTransaction() {
            @Override
            public Object transaction() {
                return c;
            }

            @Override
            public void commit() throws SQLException {
                c.commit();
            }

            @Override
            public void rollback() throws SQLException {
                c.rollback();
            }

            @Override
            public void close() throws SQLException {
                try {
                    c.rollback();
                } finally {
                    c.close();
                }
            }
        };
    }

    static String randomPrefix() {
        return "t" + randomLetters(8) + "_";
    }

    static String randomLetters(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append((char) ('a' + ThreadLocalRandom.current().nextInt(26)));
        }
        return sb.toString();
    }

    /** A store on this database with a fresh prefix. */
    static JdbcStateStore.Builder builder(String url, String prefix) {
        return JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(10);
    }

    /** Drops the tables of {@code prefix} (no-op for in-memory H2, which vanishes with its pool). */
    void drop(String url, String prefix) {
        if (this == H2_MEMORY) {
            return;
        }
        try (Connection c = DriverManager.getConnection(url); Handle h = Jdbi.open(c)) {
            new SchemaManager(Jdbi.create(c), Dialects.detect(c.getMetaData().getDatabaseProductName()),
                    new Tables(prefix)).dropAll(h);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop tables " + prefix + "*", e);
        }
    }
}
