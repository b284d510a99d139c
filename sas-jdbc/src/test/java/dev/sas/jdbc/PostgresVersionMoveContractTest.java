package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.VersionMoveContract;

/** Moving tasks between workflow versions on POSTGRES. */
class PostgresVersionMoveContractTest extends VersionMoveContract {

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
