package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.ForEachContract;

/** Dynamic fan-out, on H2_MEMORY. */
class H2MemoryForEachContractTest extends ForEachContract {

    private String url;
    private String prefix;

    @Override
    protected StateStore createStore() {
        url = TestDb.H2_MEMORY.url();
        prefix = TestDb.randomPrefix();
        return JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(10).build();
    }

    @Override
    protected void destroyStore(StateStore store) {
        store.close();
        TestDb.H2_MEMORY.drop(url, prefix);
    }
}
