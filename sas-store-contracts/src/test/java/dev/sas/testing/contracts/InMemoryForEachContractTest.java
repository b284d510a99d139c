package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

/** Dynamic fan-out, on the in-memory store. */
class InMemoryForEachContractTest extends ForEachContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
