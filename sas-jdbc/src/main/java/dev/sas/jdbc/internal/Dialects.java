package dev.sas.jdbc.internal;

import java.util.Locale;

/** Picks the dialect for a database. Not API. */
public final class Dialects {

    private Dialects() {
    }

    /**
     * The class-path resources of every schema script for {@code dialectName} ({@code h2},
     * {@code postgresql}, {@code mariadb}), in the order they are applied. For tools that build a
     * table of the same shape (the benchmark's raw-JDBC loop).
     */
    public static java.util.List<String> schemaScripts(String dialectName) {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (SchemaManager.Script s : SchemaManager.SCRIPTS) {
            out.add("/dev/sas/jdbc/schema/" + dialectName + "/V" + s.version() + "__" + s.name() + ".sql");
        }
        return out;
    }

    /**
     * The dialect for a product name as reported by {@code DatabaseMetaData.getDatabaseProductName()}.
     *
     * @throws IllegalStateException if the database is not one SAS supports
     */
    public static Dialect detect(String productName) {
        String p = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
        if (p.contains("h2")) {
            return new H2Dialect();
        }
        if (p.contains("postgres")) {
            return new PostgresDialect();
        }
        if (p.contains("mariadb") || p.contains("mysql")) {
            return new MariaDbDialect();
        }
        throw new IllegalStateException("unsupported database '" + productName
                + "': SAS supports H2, PostgreSQL and MariaDB/MySQL");
    }

    /**
     * True if the URL opens a database inside this JVM (embedded H2, in memory or in a file without
     * {@code AUTO_SERVER}): no other process shares it, and no network lies between (no socket time-out needed).
     */
    public static boolean isInProcess(String url) {
        String u = url == null ? "" : url.toLowerCase(Locale.ROOT);
        return u.startsWith("jdbc:h2:") && !u.startsWith("jdbc:h2:tcp:") && !u.startsWith("jdbc:h2:ssl:")
                && !u.contains("auto_server=true");
    }

    /** A best guess from the URL, used only to set driver properties before the first connection. */
    public static Dialect guessFromUrl(String url) {
        String u = url.toLowerCase(Locale.ROOT);
        if (u.startsWith("jdbc:postgresql:")) {
            return new PostgresDialect();
        }
        if (u.startsWith("jdbc:mariadb:") || u.startsWith("jdbc:mysql:")) {
            return new MariaDbDialect();
        }
        if (u.startsWith("jdbc:h2:")) {
            return new H2Dialect();
        }
        return null;
    }
}
