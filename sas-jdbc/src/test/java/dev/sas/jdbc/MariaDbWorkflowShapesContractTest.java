package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.WorkflowShapesContract;

/** The workflow shapes contract on MARIADB. */
class MariaDbWorkflowShapesContractTest extends WorkflowShapesContract {

    private String url;
    private String prefix;

    @Override
    protected StateStore createStore() {
        url = TestDb.MARIADB.url();
        prefix = TestDb.randomPrefix();
        return JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(10).build();
    }

    @Override
    protected void destroyStore(StateStore store) {
        store.close();
        TestDb.MARIADB.drop(url, prefix);
    }
}
