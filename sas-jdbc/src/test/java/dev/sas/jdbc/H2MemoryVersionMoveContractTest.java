package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.VersionMoveContract;

/** Moving tasks between workflow versions on H2_MEMORY. */
class H2MemoryVersionMoveContractTest extends VersionMoveContract {

    private String url;
    private String prefix;

    @Override
    protected StateStore createStore() {
        url = TestDb.H2_MEMORY.url();
        prefix = TestDb.randomPrefix();
        return TestDb.builder(url, prefix).build();
    }

    @Override
    protected void destroyStore(StateStore store) {
        store.close();
        TestDb.H2_MEMORY.drop(url, prefix);
    }
}
