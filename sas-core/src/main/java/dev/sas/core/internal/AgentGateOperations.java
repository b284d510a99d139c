package dev.sas.core.internal;

import dev.sas.core.AgentStatus;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.spi.FlowControlStore;
import dev.sas.core.spi.GateView;
import dev.sas.core.spi.StateStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What operators do with the agents' shared flow control: read every gate, reset circuit breakers.
 * Stateless; logs under {@link AgentGates}' name. Not API.
 */
public final class AgentGateOperations {
    private static final Logger log = LoggerFactory.getLogger(AgentGates.class);

    private AgentGateOperations() {
    }

    /** The stored state of every gate, for operators. */
    public static List<AgentStatus> statuses(StateStore store, Instant now) {
        List<AgentStatus> out = new ArrayList<>();
        for (GateView v : flowControlOf(store).gates(now)) {
            out.add(FlowPolicy.status(v));
        }
        return out;
    }

    /**
     * Closes the breakers of {@code agent}'s endpoints (all of them, or the one named) and clears
     * their counters.
     *
     * @param endpoint one endpoint, or null for all
     * @return how many endpoints were reset
     */
    public static int reset(StateStore store, String agent, String endpoint, Instant now) {
        FlowControlStore flow = flowControlOf(store);
        int reset = 0;
        for (GateView v : flow.gates(now)) {
            AgentStatus s = FlowPolicy.status(v);
            if (s.agent().equals(agent) && (endpoint == null || s.endpoint().equals(endpoint))) {
                CircuitBreaker.State before = s.breaker();
                flow.changeGate(v.gate(), now, g -> FlowPolicy.reset(g, now));
                log.info("{}: circuit breaker reset by an operator (was {})", FlowPolicy.describe(v.gate()), before);
                reset++;
            }
        }
        return reset;
    }

    private static FlowControlStore flowControlOf(StateStore store) {
        return store.flowControl().orElseThrow(() -> new UnsupportedOperationException(store
                + " does not support agent flow control"));
    }
}
