package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.AwaitCompletionContract;

/** Steps that await completion, on MARIADB. */
class MariaDbAwaitCompletionContractTest extends AwaitCompletionContract {

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
