package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;

/** The agent flow-control contract on the in-memory store. */
class InMemoryAgentFlowContractTest extends AgentFlowContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
