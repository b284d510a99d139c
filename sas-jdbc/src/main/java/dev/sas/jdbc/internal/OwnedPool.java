package dev.sas.jdbc.internal;

import javax.sql.DataSource;

/**
 * A connection pool the store created from a URL and closes with itself. Refers to no HikariCP
 * type, so that {@code JdbcStateStore} loads without HikariCP on the class path. Not API.
 *
 * @param dataSource the pool
 * @param name the pool's name
 * @param maxPoolSize its maximum number of connections
 */
public record OwnedPool(DataSource dataSource, String name, int maxPoolSize) implements AutoCloseable {

    /**
     * Drops the pool's connections (idle ones now, busy ones when returned): called when the
     * database says it takes no writes, i.e. the primary they lead to was demoted in a failover.
     * New connections go wherever the URL leads now ({@code targetServerType=primary} finds the new
     * primary).
     */
    public void dropConnections() {
        Pools.softEvict(dataSource, name);
    }

    /** Closes the pool. */
    @Override
    public void close() {
        if (dataSource instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException("cannot close the pool " + name + ": " + e.getMessage(), e);
            }
        }
    }
}
