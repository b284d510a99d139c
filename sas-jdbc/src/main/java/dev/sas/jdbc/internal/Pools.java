package dev.sas.jdbc.internal;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.StateStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/** Creates the HikariCP pool a store owns when it is built from a URL. Not API. */
public final class Pools {

    private Pools() {
    }

    /**
     * A pool on {@code jdbcUrl} with the driver's network and statement {@code timeouts};
     * {@code redacted} is the URL as messages may show it.
     *
     * @throws StateStoreException if the pool cannot connect; the message never contains the password
     */
    public static HikariDataSource create(String jdbcUrl, String redacted, String username, String password,
            int maxPoolSize, String poolName, Duration connectionTimeout, Timeouts timeouts) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        if (username != null) {
            config.setUsername(username);
        }
        if (password != null) {
            config.setPassword(password);
        }
        config.setMaximumPoolSize(maxPoolSize);
        config.setPoolName(poolName);
        // no gap locks on MariaDB claims; already the default elsewhere
        config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        // Fail fast while the database is away: the runtime backs off and retries on its own.
        config.setConnectionTimeout(connectionTimeout.toMillis());
        Dialect guess = Dialects.guessFromUrl(jdbcUrl);
        if (guess != null) {
            guess.configurePool(config, config.getPoolName(), timeouts);
        }
        try {
            return new HikariDataSource(config);
        } catch (RuntimeException e) {
            List<String> secrets = new ArrayList<>(Urls.secrets(jdbcUrl));
            if (password != null) {
                secrets.add(password);
            }
            String message = "cannot connect to " + redacted + ": " + Urls.scrub(rootMessage(e), secrets)
                    + ". Check that the database is running and reachable, and the URL and credentials";
            // some drivers quote the URL, password included, in their own messages
            throw Urls.leaks(e, secrets)
                    ? new StateStoreException(message + " (driver exception omitted: it contains the password)")
                    : new StateStoreException(message, e);
        }
    }

    /**
     * A pool as {@link #create} builds it, as an {@link OwnedPool} (which names no HikariCP type).
     *
     * @throws StateStoreException if the pool cannot connect; the message never contains the password
     */
    public static OwnedPool own(String jdbcUrl, String redacted, String username, String password,
            int maxPoolSize, String poolName, Duration connectionTimeout, Timeouts timeouts) {
        HikariDataSource pool = create(jdbcUrl, redacted, username, password, maxPoolSize, poolName,
                connectionTimeout, timeouts);
        return new OwnedPool(pool, pool.getPoolName(), pool.getMaximumPoolSize());
    }

    private static String rootMessage(Throwable e) {
        Throwable c = e;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return Urls.redact(String.valueOf(c.getMessage()));
    }

    /** See {@link OwnedPool#dropConnections()}. */
    static void softEvict(javax.sql.DataSource pool, String name) {
        LoggerFactory.getLogger(Pools.class).warn("SAS state store pool {}: the database takes no writes (a demoted"
                + " primary?); dropping its connections so that new ones find the primary", name);
        if (pool instanceof HikariDataSource h && h.getHikariPoolMXBean() != null) {
            h.getHikariPoolMXBean().softEvictConnections();
        }
    }
}
