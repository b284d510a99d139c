package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

/** Child task steps, on the in-memory store. */
class InMemoryChildTaskContractTest extends ChildTaskContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
