package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.StateStoreContract;
import java.sql.SQLException;

/**
 * The store of one contract test case on one database, shared by every {@code *ContractTest} here
 * instead of a copy per suite: {@link #pooled} takes an emptied table set from {@link SchemaPool}
 * and gives it back, {@link #fresh} creates a table set of its own and drops it (a suite that
 * changes the schema, or in-memory H2, which vanishes with its pool). Not thread-safe: one per test
 * instance.
 */
final class ContractStore {
    private final TestDb db;
    private final boolean pooled;
    private String url;
    private String prefix;

    private ContractStore(TestDb db, boolean pooled) {
        this.db = db;
        this.pooled = pooled;
    }

    /** Table sets from the pool of {@code db}. */
    static ContractStore pooled(TestDb db) {
        return new ContractStore(db, true);
    }

    /** A new table set on {@code db} per case, dropped after it. */
    static ContractStore fresh(TestDb db) {
        return new ContractStore(db, false);
    }

    /** A store on this case's table set (skips the case when the database is not configured). */
    StateStore create() {
        url = db.url();
        prefix = pooled ? SchemaPool.take(db, url) : TestDb.randomPrefix();
        return TestDb.builder(url, prefix).build();
    }

    /** Closes {@code store} and returns or drops its tables. */
    void destroy(StateStore store) {
        store.close();
        if (pooled) {
            SchemaPool.give(db, url, prefix);
        } else {
            db.drop(url, prefix);
        }
    }

    /** A host transaction on a connection of its own to this case's database. */
    StateStoreContract.HostTransaction hostTransaction() throws SQLException {
        return TestDb.hostTransaction(url);
    }
}
