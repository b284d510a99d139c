package dev.sas.core.spi;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Instant;

/**
 * A claimed task whose deadline has passed, as the supervisor's scan sees it.
 *
 * @param taskId the task
 * @param workflow workflow name
 * @param workflowVersion workflow version
 * @param businessKey business key
 * @param status {@code PROCESSING} or {@code COMPENSATING}
 * @param lease the lease of the claim that expired; the recovery write names it
 * @param lockedBy the instance that held it
 * @param currentStep the step that timed out
 * @param attempt attempts at that step so far
 * @param failureCount time-outs of that step so far, before this one
 * @param completeBy the deadline that passed
 * @param cancelRequested an operator asked to cancel
 * @param statusChannel status channel, or null
 */
public record ExpiredTask(
        TaskId taskId,
        String workflow,
        int workflowVersion,
        String businessKey,
        TaskStatus status,
        long lease,
        String lockedBy,
        int currentStep,
        int attempt,
        int failureCount,
        Instant completeBy,
        boolean cancelRequested,
        String statusChannel) {
}
