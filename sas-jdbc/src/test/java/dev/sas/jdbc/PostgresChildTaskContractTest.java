package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.ChildTaskContract;

/** Child task steps, on POSTGRES. */
class PostgresChildTaskContractTest extends ChildTaskContract {

    private final ContractStore db = ContractStore.pooled(TestDb.POSTGRES);

    @Override
    protected StateStore createStore() {
        return db.create();
    }

    @Override
    protected void destroyStore(StateStore store) {
        db.destroy(store);
    }
}
