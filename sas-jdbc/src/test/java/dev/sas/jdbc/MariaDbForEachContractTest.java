package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.ForEachContract;

/** Dynamic fan-out, on MARIADB. */
class MariaDbForEachContractTest extends ForEachContract {

    private String url;
    private String prefix;

    @Override
    protected StateStore createStore() {
        url = TestDb.MARIADB.url();
        prefix = SchemaPool.take(TestDb.MARIADB, url);
        return JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(10).build();
    }

    @Override
    protected void destroyStore(StateStore store) {
        store.close();
        SchemaPool.give(TestDb.MARIADB, url, prefix);
    }
}
