package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

/** Parallel steps, on the in-memory store. */
class InMemoryParallelContractTest extends ParallelContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
