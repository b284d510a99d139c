package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.StatusOutboxContract;
import dev.sas.testing.contracts.StateStoreContract;

/** The status outbox contract on POSTGRES. */
class PostgresStatusOutboxContractTest extends StatusOutboxContract {

    private final ContractStore db = ContractStore.pooled(TestDb.POSTGRES);

    @Override
    protected StateStore createStore() {
        return db.create();
    }

    @Override
    protected void destroyStore(StateStore store) {
        db.destroy(store);
    }

    @Override
    protected StateStoreContract.HostTransaction beginHostTransaction() throws java.sql.SQLException {
        return db.hostTransaction();
    }
}
