package dev.sas.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the store's builder learns from the first connection: the database (its dialect) and, for a
 * data source the host handed in, whether its connections need READ COMMITTED put on them and
 * whether it lacks a socket time-out. Stateless. Not API.
 */
public final class HandedInDataSources {

    /** Logged under the store's public name: that is what operators look for. */
    private static final Logger log = LoggerFactory.getLogger("dev.sas.jdbc.JdbcStateStore");

    private HandedInDataSources() {
    }

    /** What the first connection says. */
    private record Connected(String product, String url, int isolation, int networkTimeoutMs) {
        static Connected of(Connection c) throws SQLException {
            return new Connected(c.getMetaData().getDatabaseProductName(), c.getMetaData().getURL(),
                    c.getTransactionIsolation(), c.getNetworkTimeout());
        }
    }

    /**
     * The dialect of the database {@code jdbi} connects to. For a data source the host handed in
     * ({@code handedIn}), connections not at READ COMMITTED are put there while SAS uses them, and a
     * missing socket time-out on a database server is reported at WARN.
     *
     * @param ownSocketTimeout the socket time-out of the store's own pools, named in the WARN
     */
    public static Dialect detect(Jdbi jdbi, boolean handedIn, Duration ownSocketTimeout) throws SQLException {
        Connected facts = jdbi.withHandle(h -> Connected.of(h.getConnection()));
        Dialect dialect = Dialects.detect(facts.product());
        if (!handedIn) {
            return dialect;
        }
        if (facts.isolation() != Connection.TRANSACTION_READ_COMMITTED) {
            log.warn("the data source handed to SAS gives connections at {}; SAS puts each at READ COMMITTED"
                    + " while it uses it and back afterwards (one extra statement each way). Configure the"
                    + " pool at READ COMMITTED (HikariCP: transactionIsolation=TRANSACTION_READ_COMMITTED)"
                    + " to save them; at REPEATABLE READ claims take gap locks and run 1.4-1.7x slower on"
                    + " MariaDB", Isolation.isolationName(facts.isolation()));
            jdbi.installPlugin(Isolation.readCommitted(facts.isolation()));
        }
        if (!Dialects.isInProcess(facts.url()) && facts.networkTimeoutMs() == 0) {
            log.warn("the data source handed to SAS (the application's pool) has no socket (network) time-out: if"
                    + " the network loses a connection without closing it (a database failover, a NAT or firewall"
                    + " dropping an idle flow), SAS's claim, recorder and supervisor threads, and the application's"
                    + " own, wait on it for as long as TCP allows, often 15 minutes or more. {} Take a value above"
                    + " your longest query; SAS's own pool uses {} s", dialect.socketTimeoutAdvice(),
                    ownSocketTimeout.toSeconds());
        }
        return dialect;
    }

    /** Closes {@code pool} (if any) after {@code failure}, adding a failure to close to it. */
    public static void closeQuietly(OwnedPool pool, Throwable failure) {
        if (pool != null) {
            try {
                pool.close();
            } catch (RuntimeException e) {
                failure.addSuppressed(e);
            }
        }
    }

    /** The message of {@code e}'s root cause, with any password in a URL redacted. */
    public static String rootMessage(Throwable e) {
        Throwable c = e;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return Urls.redact(String.valueOf(c.getMessage()));
    }
}
