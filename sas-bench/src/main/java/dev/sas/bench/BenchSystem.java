package dev.sas.bench;

/**
 * One system under test on one database, with its own freshly created tables. Submitting before
 * {@link #start()} builds a backlog; submitting after it measures what users see (end to end,
 * latency). Submits are safe from several threads at once.
 */
public interface BenchSystem extends AutoCloseable {

    /** Short name, e.g. "SAS" or "db-scheduler (fetch)". */
    String name();

    /** Submits task {@code i} (its own transaction, as the system's API does it). */
    void submit(int i) throws Exception;

    /**
     * Submits tasks {@code from} to {@code from + count - 1} in one call of the system's batch API,
     * as a user enqueues many: SAS {@code SasClient.submitAll}, db-scheduler {@code scheduleBatch},
     * raw JDBC one multi-row {@code INSERT} in one transaction.
     */
    void submitBatch(int from, int count) throws Exception;

    /**
     * Tasks recorded complete in the database, counted there (not by the probe), to check that
     * what the listeners reported is what was committed.
     */
    long completedInStore() throws Exception;

    /** Starts processing. */
    void start() throws Exception;

    /** SQL statements and commits issued through this system's data source so far. */
    CountingDataSource.Counts counts();

    /** Stops processing, drops this system's tables and closes its pool. */
    @Override
    void close();
}
