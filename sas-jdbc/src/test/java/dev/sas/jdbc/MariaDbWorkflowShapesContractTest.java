package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.WorkflowShapesContract;

/** The workflow shapes contract on MARIADB. */
class MariaDbWorkflowShapesContractTest extends WorkflowShapesContract {

    private final ContractStore db = ContractStore.fresh(TestDb.MARIADB);

    @Override
    protected StateStore createStore() {
        return db.create();
    }

    @Override
    protected void destroyStore(StateStore store) {
        db.destroy(store);
    }
}
