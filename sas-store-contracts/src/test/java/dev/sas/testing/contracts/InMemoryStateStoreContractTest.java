package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

class InMemoryStateStoreContractTest extends StateStoreContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
