package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.AwaitCompletionContract;

/** Steps that await completion, on POSTGRES. */
class PostgresAwaitCompletionContractTest extends AwaitCompletionContract {

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
