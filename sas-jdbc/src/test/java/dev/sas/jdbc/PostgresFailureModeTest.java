package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.FailureModeContract;

/** Every design failure mode, injected against real runtimes on POSTGRES. */
class PostgresFailureModeTest extends FailureModeContract {

    private String url;
    private String prefix;

    @Override
    protected StateStore createStore() {
        url = TestDb.POSTGRES.url();
        prefix = SchemaPool.take(TestDb.POSTGRES, url);
        return TestDb.builder(url, prefix).build();
    }

    @Override
    protected void destroyStore(StateStore store) {
        store.close();
        SchemaPool.give(TestDb.POSTGRES, url, prefix);
    }
}
