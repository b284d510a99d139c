package dev.sas.testing;

import dev.sas.core.spi.StateStore;

/** Steps that await a reply, on the in-memory store. */
class InMemoryAwaitReplyContractTest extends AwaitReplyContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
