package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.ChildTaskContract;

/** Child task steps, on H2_MEMORY. */
class H2MemoryChildTaskContractTest extends ChildTaskContract {

    private final ContractStore db = ContractStore.fresh(TestDb.H2_MEMORY);

    @Override
    protected StateStore createStore() {
        return db.create();
    }

    @Override
    protected void destroyStore(StateStore store) {
        db.destroy(store);
    }
}
