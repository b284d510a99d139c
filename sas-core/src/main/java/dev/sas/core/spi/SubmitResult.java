package dev.sas.core.spi;

import dev.sas.core.TaskId;

/**
 * The outcome of a submission.
 *
 * @param taskId the task that now represents the submission
 * @param created false when a task with the same workflow and business key already existed
 *     (then {@code taskId} is that task's id)
 */
public record SubmitResult(TaskId taskId, boolean created) {
}
