package dev.sas.testing;

import dev.sas.core.spi.StateStore;

class InMemoryReplyOutboxContractTest extends ReplyOutboxContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
