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
 * @param statusChannel status channel name, or null
 * @param firstStepName name of step 0, written into the claim's STEP_STARTED event
 * @param firstStepTimeout deadline of one attempt at step 0
 * @param createdAt submission time
 * @param dueAt when the task may first be claimed
 * @param traceContext the submitter's trace context to restore around the task's steps (see
 *     {@link dev.sas.core.Tracing}), at most {@value #MAX_TRACE_CONTEXT_LENGTH} characters, or null
 */
public record NewTask(
        TaskId taskId,
        String workflow,
        int workflowVersion,
        String businessKey,
        int priority,
        String input,
        String statusChannel,
        String firstStepName,
        Duration firstStepTimeout,
        Instant createdAt,
        Instant dueAt,
        String traceContext) {

    /** Longest trace context a store keeps. */
    public static final int MAX_TRACE_CONTEXT_LENGTH = 512;

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
        if (traceContext != null && traceContext.length() > MAX_TRACE_CONTEXT_LENGTH) {
            throw new IllegalArgumentException("traceContext must be at most " + MAX_TRACE_CONTEXT_LENGTH
                    + " characters, was " + traceContext.length());
        }
    }

    /** A task without a trace context. */
    public NewTask(TaskId taskId, String workflow, int workflowVersion, String businessKey, int priority, String input,
            String statusChannel, String firstStepName, Duration firstStepTimeout, Instant createdAt, Instant dueAt) {
        this(taskId, workflow, workflowVersion, businessKey, priority, input, statusChannel, firstStepName, firstStepTimeout,
                createdAt, dueAt, null);
    }
}
