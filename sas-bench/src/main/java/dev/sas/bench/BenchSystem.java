package dev.sas.bench;

/**
 * One system under test on one database, with its own freshly created tables. Submitting before
 * {@link #start()} builds a backlog; submitting after it measures latency.
 */
public interface BenchSystem extends AutoCloseable {

    /** Short name, e.g. "SAS" or "db-scheduler (fetch)". */
    String name();

    /** Submits task {@code i} (its own transaction, as the system's API does it). */
    void submit(int i) throws Exception;

    /** Starts processing. */
    void start() throws Exception;

    /** SQL statements and commits issued through this system's data source so far. */
    CountingDataSource.Counts counts();

    /** Stops processing, drops this system's tables and closes its pool. */
    @Override
    void close();
}
