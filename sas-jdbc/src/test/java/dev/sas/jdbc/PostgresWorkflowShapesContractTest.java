package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.WorkflowShapesContract;

/** The workflow shapes contract on POSTGRES. */
class PostgresWorkflowShapesContractTest extends WorkflowShapesContract {

    private String url;
    private String prefix;

    @Override
    protected StateStore createStore() {
        url = TestDb.POSTGRES.url();
        prefix = TestDb.randomPrefix();
        return JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(10).build();
    }

    @Override
    protected void destroyStore(StateStore store) {
        store.close();
        TestDb.POSTGRES.drop(url, prefix);
    }
}
