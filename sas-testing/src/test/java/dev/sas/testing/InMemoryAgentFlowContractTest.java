package dev.sas.testing;

import dev.sas.core.spi.StateStore;

/** The agent flow-control contract on the in-memory store. */
class InMemoryAgentFlowContractTest extends AgentFlowContract {

    @Override
    protected StateStore createStore() {
        return new InMemoryStateStore();
    }
}
