package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.FailureModeContract;

/** Every design failure mode, injected against real runtimes on POSTGRES. */
class PostgresFailureModeTest extends FailureModeContract {

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
