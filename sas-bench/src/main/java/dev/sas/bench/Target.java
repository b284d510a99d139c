package dev.sas.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One database the benchmark runs on, and the pool settings every system gets on it.
 *
 * @param poolSize connections in every system's pool, the same for all ({@code --pool})
 */
public record Target(String key, String url, int poolSize) {

    /**
     * Connections per pool by default, the same for every system: issue 12's independent harness
     * gave every system a HikariCP pool of 6.
     */
    public static final int DEFAULT_POOL_SIZE = 6;

    public Target {
        if (poolSize < 1) {
            throw new IllegalArgumentException("poolSize must be at least 1, was " + poolSize);
        }
    }

    /** A target with the {@link #DEFAULT_POOL_SIZE default pool size}. */
    public Target(String key, String url) {
        this(key, url, DEFAULT_POOL_SIZE);
    }

    /** The same database with pools of {@code n} connections. */
    public Target withPoolSize(int n) {
        return new Target(key, url, n);
    }

    /** The same pool settings on another URL (e.g. the H2 file served over TCP to child JVMs). */
    public Target withUrl(String otherUrl) {
        return new Target(key, otherUrl, poolSize);
    }

    private static final AtomicInteger POOLS = new AtomicInteger();

    public enum Kind { H2, POSTGRES, MARIADB }

    public Kind kind() {
        String u = url.toLowerCase(Locale.ROOT);
        if (u.startsWith("jdbc:h2:")) {
            return Kind.H2;
        }
        if (u.startsWith("jdbc:postgresql:")) {
            return Kind.POSTGRES;
        }
        if (u.startsWith("jdbc:mariadb:") || u.startsWith("jdbc:mysql:")) {
            return Kind.MARIADB;
        }
        throw new IllegalArgumentException("unsupported URL " + url);
    }

    /** A fresh pool: {@link #poolSize} connections, READ COMMITTED (what SAS's own pool sets). */
    public HikariDataSource pool(String name) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setMaximumPoolSize(poolSize);
        c.setMinimumIdle(poolSize);
        c.setPoolName(name + "-" + POOLS.incrementAndGet());
        c.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        if (kind() == Kind.POSTGRES) {
            c.addDataSourceProperty("reWriteBatchedInserts", "true");
        }
        return new HikariDataSource(c);
    }

    /** Product, version and the settings that matter for commit cost. */
    public Map<String, String> describe() {
        Map<String, String> out = new LinkedHashMap<>();
        try (HikariDataSource ds = pool("describe"); Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            DatabaseMetaData md = c.getMetaData();
            out.put("product", md.getDatabaseProductName() + " " + md.getDatabaseProductVersion());
            out.put("driver", md.getDriverName() + " " + md.getDriverVersion());
            switch (kind()) {
                case POSTGRES -> {
                    for (String k : List.of("synchronous_commit", "fsync", "shared_buffers", "wal_level", "max_connections")) {
                        try (ResultSet r = s.executeQuery("SHOW " + k)) {
                            r.next();
                            out.put(k, r.getString(1));
                        }
                    }
                }
                case MARIADB -> {
                    try (ResultSet r = s.executeQuery("SHOW VARIABLES WHERE Variable_name IN ('innodb_flush_log_at_trx_commit',"
                            + "'sync_binlog','log_bin','innodb_buffer_pool_size','transaction_isolation')")) {
                        while (r.next()) {
                            out.put(r.getString(1), r.getString(2));
                        }
                    }
                }
                case H2 -> out.put("url", url);
            }
        } catch (SQLException e) {
            out.put("error", e.getMessage());
        }
        return out;
    }

    /** Drops every table whose name starts with {@code prefix} (a unique per-run prefix). */
    public static void dropTables(javax.sql.DataSource ds, String prefix) {
        String p = prefix.toLowerCase(Locale.ROOT);
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(true);
            List<String> names = new ArrayList<>();
            try (ResultSet r = c.getMetaData().getTables(c.getCatalog(), null, "%", new String[] {"TABLE", "BASE TABLE"})) {
                while (r.next()) {
                    String name = r.getString("TABLE_NAME");
                    String schema = r.getString("TABLE_SCHEM");
                    if (name.toLowerCase(Locale.ROOT).startsWith(p)
                            && (schema == null || !schema.equalsIgnoreCase("INFORMATION_SCHEMA"))) {
                        names.add(name);
                    }
                }
            }
            for (String name : names) {
                try (Statement s = c.createStatement()) {
                    s.execute("DROP TABLE " + quote(c, name));
                }
            }
            dropFunctions(c, p);
        } catch (SQLException e) {
            System.err.println("warning: could not drop tables " + prefix + "*: " + e.getMessage());
        }
    }

    /**
     * On PostgreSQL, drops the functions of the current schema whose name starts with {@code prefix}
     * (SAS's schema creates trigger functions named after its tables; dropping the tables leaves them).
     */
    private static void dropFunctions(Connection c, String prefix) throws SQLException {
        if (!c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT).contains("postgres")) {
            return;
        }
        List<String> functions = new ArrayList<>();
        try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT p.proname FROM pg_proc p JOIN pg_namespace n"
                + " ON n.oid = p.pronamespace WHERE n.nspname = current_schema() AND left(p.proname, ?) = ?")) {
            ps.setInt(1, prefix.length());
            ps.setString(2, prefix);
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) {
                    functions.add(r.getString(1));
                }
            }
        }
        for (String f : functions) {
            try (Statement s = c.createStatement()) {
                s.execute("DROP FUNCTION IF EXISTS " + quote(c, f) + "() CASCADE");
            }
        }
    }

    private static String quote(Connection c, String name) throws SQLException {
        String q = c.getMetaData().getIdentifierQuoteString();
        return q == null || q.isBlank() ? name : q + name + q;
    }
}
