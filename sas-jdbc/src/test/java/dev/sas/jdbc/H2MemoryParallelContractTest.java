package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.ParallelContract;

/** Parallel steps, on H2_MEMORY. */
class H2MemoryParallelContractTest extends ParallelContract {

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
