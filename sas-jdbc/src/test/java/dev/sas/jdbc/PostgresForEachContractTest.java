package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.ForEachContract;

/** Dynamic fan-out, on POSTGRES. */
class PostgresForEachContractTest extends ForEachContract {

    private String url;
    private String prefix;

    @Override
    protected StateStore createStore() {
        url = TestDb.POSTGRES.url();
        prefix = SchemaPool.take(TestDb.POSTGRES, url);
        return JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(10).build();
    }

    @Override
    protected void destroyStore(StateStore store) {
        store.close();
        SchemaPool.give(TestDb.POSTGRES, url, prefix);
    }
}
