package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.FailureModeContract;

/** Every design failure mode, injected against real runtimes on H2_MEMORY. */
class H2MemoryFailureModeTest extends FailureModeContract {

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
