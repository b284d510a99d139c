package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

/** Steps that await completion, on the in-memory store. */
class InMemoryAwaitCompletionContractTest extends AwaitCompletionContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
