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

/** One database the benchmark runs on, and the pool settings every system gets on it. */
public record Target(String key, String url) {

    /** Connections per pool, the same for every system (SAS's default pool size). */
    public static final int POOL_SIZE = 10;

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

    /** A fresh pool: {@value #POOL_SIZE} connections, READ COMMITTED (what SAS's own pool sets). */
    public HikariDataSource pool(String name) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setMaximumPoolSize(POOL_SIZE);
        c.setMinimumIdle(POOL_SIZE);
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
        } catch (SQLException e) {
            System.err.println("warning: could not drop tables " + prefix + "*: " + e.getMessage());
        }
    }

    private static String quote(Connection c, String name) throws SQLException {
        String q = c.getMetaData().getIdentifierQuoteString();
        return q == null || q.isBlank() ? name : q + name + q;
    }
}
