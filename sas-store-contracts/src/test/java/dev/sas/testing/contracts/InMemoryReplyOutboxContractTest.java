package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

class InMemoryReplyOutboxContractTest extends ReplyOutboxContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
