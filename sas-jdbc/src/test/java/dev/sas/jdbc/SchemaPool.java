package dev.sas.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Table sets reused from one contract test case to the next on PostgreSQL, MariaDB and file H2: creating a
 * schema (every migration, each DDL statement a round trip and, on MariaDB, an implicit commit)
 * costs far more than a case's own work there, and hundreds of cases each made a fresh one. A
 * case takes a prefix with the current schema and no rows ({@link #take}); after it the tables
 * are emptied (every table of the prefix but its schema version, identities reset, the supervisor
 * lease row put back as the first migration writes it) and the prefix goes back to the pool
 * ({@link #give}). What the pool holds is dropped when the test JVM exits. A case that changes
 * the schema itself must not use the pool, and a migration that writes rows of its own (as V1
 * writes the supervisor lease's) must have them put back in {@link #empty}. Thread-safe.
 */
final class SchemaPool {
    private static final Map<String, Deque<String>> FREE = new ConcurrentHashMap<>();
    private static final Map<String, TestDb> CREATED = new ConcurrentHashMap<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(SchemaPool::dropAll, "schema-pool-drop"));
    }

    private SchemaPool() {
    }

    /** True for the databases whose schema is worth reusing: PostgreSQL and MariaDB (and file H2 for the contract). */
    static boolean pooled(TestDb db) {
        return db == TestDb.POSTGRES || db == TestDb.MARIADB;
    }

    /** A prefix on {@code url} whose tables are empty (or do not exist yet: the store creates them). */
    static String take(TestDb db, String url) {
        Deque<String> free = FREE.computeIfAbsent(url, u -> new ArrayDeque<>());
        synchronized (free) {
            String prefix = free.pollFirst();
            if (prefix != null) {
                return prefix;
            }
        }
        String prefix = TestDb.randomPrefix();
        CREATED.put(url + "|" + prefix, db);
        return prefix;
    }

    /** Empties {@code prefix}'s tables and returns it to the pool; drops them if they cannot be emptied. */
    static void give(TestDb db, String url, String prefix) {
        try {
            empty(db, url, prefix);
        } catch (SQLException | RuntimeException e) {
            CREATED.remove(url + "|" + prefix);
            db.drop(url, prefix);
            return;
        }
        Deque<String> free = FREE.computeIfAbsent(url, u -> new ArrayDeque<>());
        synchronized (free) {
            free.addLast(prefix);
        }
    }

    private static void empty(TestDb db, String url, String prefix) throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
            List<String> tables = tables(c, prefix);
            if (tables.isEmpty()) {
                throw new SQLException("no tables with prefix " + prefix);
            }
            if (db == TestDb.POSTGRES) {
                st.execute("TRUNCATE TABLE " + String.join(", ", tables) + " RESTART IDENTITY CASCADE");
            } else if (db == TestDb.H2_FILE) {
                for (String t : tables) {
                    st.execute("TRUNCATE TABLE " + t + " RESTART IDENTITY");
                }
            } else {
                for (String t : tables) {
                    st.execute("TRUNCATE TABLE " + t); // resets AUTO_INCREMENT
                }
            }
            st.execute("INSERT INTO " + prefix + "supervisor_lease (name, holder, expires_at)"
                    + " VALUES ('supervisor', NULL, 0)");
        }
    }

    /** Every table of {@code prefix} but its schema version. */
    private static List<String> tables(Connection c, String prefix) throws SQLException {
        List<String> out = new ArrayList<>();
        DatabaseMetaData md = c.getMetaData();
        // H2 keeps unquoted names in upper case, and matches the pattern case-sensitively
        String pattern = md.storesUpperCaseIdentifiers() ? prefix.toUpperCase(Locale.ROOT) : prefix;
        try (ResultSet rs = md.getTables(c.getCatalog(), null, pattern + "%", new String[] {"TABLE"})) {
            while (rs.next()) {
                String name = rs.getString("TABLE_NAME").toLowerCase(Locale.ROOT);
                if (name.startsWith(prefix) && !name.equals(prefix + "schema_version")) {
                    out.add(name);
                }
            }
        }
        return out;
    }

    private static void dropAll() {
        CREATED.forEach((key, db) -> {
            int bar = key.lastIndexOf('|');
            try {
                db.drop(key.substring(0, bar), key.substring(bar + 1));
            } catch (RuntimeException e) {
                System.err.println("could not drop the test tables " + key + ": " + e.getMessage());
            }
        });
    }
}
