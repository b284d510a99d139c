package dev.sas.core.spi;

import dev.sas.core.TaskId;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * A task to insert, as the runtime prepared it.
 *
 * @param taskId the new task's id
 * @param workflow workflow name
 * @param workflowVersion workflow version
 * @param businessKey unique per workflow; a second submit with it returns the first task
 * @param priority higher is claimed first
 * @param input encoded input
 * @param replyTo reply channel name, or null
 * @param firstStepName name of step 0, written into the claim's STEP_STARTED event
 * @param firstStepTimeout deadline of one attempt at step 0
 * @param createdAt submission time
 * @param dueAt when the task may first be claimed
 */
public record NewTask(
        TaskId taskId,
        String workflow,
        int workflowVersion,
        String businessKey,
        int priority,
        String input,
        String replyTo,
        String firstStepName,
        Duration firstStepTimeout,
        Instant createdAt,
        Instant dueAt) {

    /** @throws NullPointerException if a required field is null */
    public NewTask {
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(workflow, "workflow");
        Objects.requireNonNull(businessKey, "businessKey");
        Objects.requireNonNull(input, "input");
        Objects.requireNonNull(firstStepName, "firstStepName");
        Objects.requireNonNull(firstStepTimeout, "firstStepTimeout");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(dueAt, "dueAt");
    }
}
