package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

/** The workflow shapes contract on the in-memory store. */
class InMemoryWorkflowShapesContractTest extends WorkflowShapesContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
