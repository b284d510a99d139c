package dev.sas.jdbc.internal;

import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Locale;

/**
 * Checks, before a store is built, that the optional libraries its settings need are on the class
 * path, so that a missing one is reported by name instead of as a {@code NoClassDefFoundError}.
 * HikariCP and the JDBC drivers are optional dependencies of {@code sas-jdbc}. Not API.
 */
public final class ClassPath {

    /** Maven coordinates of HikariCP, for messages. */
    public static final String HIKARICP = "com.zaxxer:HikariCP";
    /** Maven coordinates of H2, for messages. */
    public static final String H2 = "com.h2database:h2";

    private ClassPath() {
    }

    /**
     * Checks that HikariCP is present, which {@code setting} needs.
     *
     * @throws IllegalStateException naming the missing dependency and what to do otherwise
     */
    public static void requireHikari(String setting) {
        if (!present("com.zaxxer.hikari.HikariDataSource")) {
            throw new IllegalStateException(setting + " needs HikariCP on the class path: the store builds a HikariCP"
                    + " pool for it. Add the dependency " + HIKARICP + ", or build your own pool and pass it with"
                    + " dataSource(...)");
        }
    }

    /**
     * Checks that a JDBC driver accepts {@code url}.
     *
     * @param redacted the URL as a message may show it
     * @throws IllegalStateException naming the driver's Maven coordinates when none does
     */
    public static void requireDriver(String url, String redacted) {
        try {
            DriverManager.getDriver(url);
        } catch (SQLException e) {
            throw new IllegalStateException("no JDBC driver on the class path accepts " + redacted + ". Add the"
                    + " dependency " + driverFor(url), e);
        }
    }

    /** Maven coordinates of the driver for {@code url}, as a hint. */
    static String driverFor(String url) {
        String u = url.toLowerCase(Locale.ROOT);
        if (u.startsWith("jdbc:h2:")) {
            return H2;
        }
        if (u.startsWith("jdbc:postgresql:")) {
            return "org.postgresql:postgresql";
        }
        if (u.startsWith("jdbc:mariadb:") || u.startsWith("jdbc:mysql:")) {
            return "org.mariadb.jdbc:mariadb-java-client (or com.mysql:mysql-connector-j for jdbc:mysql:)";
        }
        return "of your database's JDBC driver";
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, ClassPath.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
