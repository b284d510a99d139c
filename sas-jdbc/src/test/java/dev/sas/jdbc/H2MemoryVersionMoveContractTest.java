package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.VersionMoveContract;

/** Moving tasks between workflow versions on H2_MEMORY. */
class H2MemoryVersionMoveContractTest extends VersionMoveContract {

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
