package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.VersionMoveContract;

/** Moving tasks between workflow versions on MARIADB. */
class MariaDbVersionMoveContractTest extends VersionMoveContract {

    private final ContractStore db = ContractStore.pooled(TestDb.MARIADB);

    @Override
    protected StateStore createStore() {
        return db.create();
    }

    @Override
    protected void destroyStore(StateStore store) {
        db.destroy(store);
    }
}
