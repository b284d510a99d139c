package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.StateStoreContract;

/** The store contract on POSTGRES. */
class PostgresStateStoreContractTest extends StateStoreContract {

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
    protected HostTransaction beginHostTransaction() throws java.sql.SQLException {
        return db.hostTransaction();
    }
}
