package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.StatusOutboxContract;
import dev.sas.testing.contracts.StateStoreContract;

/** The status outbox contract on POSTGRES. */
class PostgresStatusOutboxContractTest extends StatusOutboxContract {

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

    @Override
    protected StateStoreContract.HostTransaction beginHostTransaction() throws java.sql.SQLException {
        return TestDb.hostTransaction(url);
    }
}
