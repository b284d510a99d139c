package dev.sas.core.spi;

import java.util.Objects;

/**
 * One step of one workflow version: where a task stands. Names the tasks that wait for an agent
 * ({@link FlowControlStore#wakeWaiting}): those at a step that calls it. Immutable.
 *
 * @param workflow the workflow's name
 * @param workflowVersion its version
 * @param step the step's position, from 0
 */
public record StepKey(String workflow, int workflowVersion, int step) {

    /** @throws NullPointerException if {@code workflow} is null */
    public StepKey {
        Objects.requireNonNull(workflow, "workflow must not be null");
    }
}
