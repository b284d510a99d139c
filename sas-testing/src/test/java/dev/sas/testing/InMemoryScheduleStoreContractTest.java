package dev.sas.testing;

import dev.sas.core.spi.StateStore;

class InMemoryScheduleStoreContractTest extends ScheduleStoreContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
