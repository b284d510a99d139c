package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.ScheduleStoreContract;

/** The schedule store contract on MARIADB. */
class MariaDbScheduleStoreContractTest extends ScheduleStoreContract {

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
