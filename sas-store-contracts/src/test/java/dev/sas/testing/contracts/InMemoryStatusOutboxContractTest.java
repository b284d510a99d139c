package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

class InMemoryStatusOutboxContractTest extends StatusOutboxContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
