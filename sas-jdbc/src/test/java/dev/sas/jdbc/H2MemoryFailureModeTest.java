package dev.sas.jdbc;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.contracts.FailureModeContract;

/** Every design failure mode, injected against real runtimes on H2_MEMORY. */
class H2MemoryFailureModeTest extends FailureModeContract {

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
