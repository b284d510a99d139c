package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

class InMemoryVersionMoveContractTest extends VersionMoveContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
