package dev.sas.core.internal;

import dev.sas.core.Agent;
import dev.sas.core.FlowControl;
import dev.sas.core.StepDefinition;
import dev.sas.core.Workflow;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** The flow controls the registered workflows' agents declare, checked for agreement. Stateless. */
public final class AgentFlowControls {
    private AgentFlowControls() {
    }

    /**
     * The flow control of every agent the workflows call (steps and compensations), by agent name.
     *
     * @throws IllegalStateException if two agents of one name have different flow controls
     */
    public static Map<String, FlowControl> of(List<Workflow<?>> workflows) {
        Map<String, FlowControl> out = new LinkedHashMap<>();
        Map<String, String> where = new HashMap<>();
        for (Workflow<?> w : workflows) {
            for (StepDefinition<?> step : w.steps()) {
                for (Agent<?, ?> agent : new Agent<?, ?>[] {step.agent().orElse(null),
                        step.compensationAgent().orElse(null)}) {
                    if (agent == null) {
                        continue;
                    }
                    FlowControl fc = Objects.requireNonNull(agent.flowControl(),
                            "agent '" + agent.name() + "' returned a null flowControl()");
                    String here = "workflow '" + w.name() + "' version " + w.version() + " step '" + step.name() + "'";
                    FlowControl before = out.putIfAbsent(agent.name(), fc);
                    if (before == null) {
                        where.put(agent.name(), here);
                    } else if (!before.equals(fc)) {
                        throw new IllegalStateException("agent '" + agent.name() + "' has two different flow controls: "
                                + before + " in " + where.get(agent.name()) + " and " + fc + " in " + here
                                + "; agents of one name share their limits and breaker, so give them the same one");
                    }
                }
            }
        }
        return out;
    }
}
