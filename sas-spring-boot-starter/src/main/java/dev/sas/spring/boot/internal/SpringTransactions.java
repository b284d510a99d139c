package dev.sas.spring.boot.internal;

import dev.sas.core.SasRuntime;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Finds the Spring transaction the submitting thread is in on the application's data source, for
 * {@code JdbcStateStore.Builder.hostTransaction}: its connection, so the task commits or rolls back
 * with the caller's rows; null outside one (or in one on another resource), so the submit commits
 * on its own. Once per transaction it registers a synchronization that wakes this node's scheduler
 * right after the commit. Not API. Thread-safe.
 */
public final class SpringTransactions implements Supplier<Object> {

    private final DataSource dataSource;
    private volatile SasRuntime runtime;

    /** @param dataSource the data source whose transactions submissions join */
    public SpringTransactions(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** The runtime to wake after a commit; set once it is built. */
    public void wake(SasRuntime runtime) {
        this.runtime = runtime;
    }

    @Override
    public Object get() {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            return null;
        }
        if (!(TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder holder)
                || holder.getConnectionHandle() == null) {
            return null;
        }
        wakeAfterCommit();
        return holder.getConnection();
    }

    private void wakeAfterCommit() {
        SasRuntime r = runtime;
        if (r == null || !TransactionSynchronizationManager.isSynchronizationActive()) {
            return;
        }
        for (TransactionSynchronization s : TransactionSynchronizationManager.getSynchronizations()) {
            if (s instanceof WakeAfterCommit) {
                return;
            }
        }
        TransactionSynchronizationManager.registerSynchronization(new WakeAfterCommit(r));
    }

    /** Wakes the scheduler once the transaction committed. */
    private record WakeAfterCommit(SasRuntime runtime) implements TransactionSynchronization {
        @Override
        public void afterCommit() {
            runtime.pollNow();
        }
    }
}
