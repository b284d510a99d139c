package dev.sas.core.spi;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Instant;

/**
 * The task a completion is applied to, as the store read it under lock in the completion's transaction
 * ({@link StepCompletionStore#acceptCompletion}); the caller decides the transition from it. Immutable.
 *
 * @param taskId the task
 * @param workflow workflow name
 * @param workflowVersion workflow version
 * @param businessKey business key
 * @param status {@link TaskStatus#AWAITING_COMPLETION}
 * @param lease the awaited attempt's lease
 * @param currentStep the awaiting step
 * @param attempt attempts at that step so far
 * @param failureCount time-outs of that step so far
 * @param completeBy the awaited attempt's deadline
 * @param cancelRequested an operator asked to cancel
 * @param statusChannel status channel, or null
 */
public record CompletionTarget(
        TaskId taskId,
        String workflow,
        int workflowVersion,
        String businessKey,
        TaskStatus status,
        long lease,
        int currentStep,
        int attempt,
        int failureCount,
        Instant completeBy,
        boolean cancelRequested,
        String statusChannel) {
}
