package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.FailureModeContract;

/** Every design failure mode, injected against real runtimes on MARIADB. */
class MariaDbFailureModeTest extends FailureModeContract {

    private String url;
    private String prefix;

    @Override
    protected StateStore createStore() {
        url = TestDb.MARIADB.url();
        prefix = SchemaPool.take(TestDb.MARIADB, url);
        return TestDb.builder(url, prefix).build();
    }

    @Override
    protected void destroyStore(StateStore store) {
        store.close();
        SchemaPool.give(TestDb.MARIADB, url, prefix);
    }
}
