package dev.sas.core;

import java.time.Instant;
import java.util.Objects;

/**
 * Raised when a task needs an operator: it went to {@link TaskStatus#ERROR} or
 * {@link TaskStatus#COMPENSATION_FAILED}, or its workflow definition is missing.
 *
 * @param taskId the task
 * @param businessKey its business key
 * @param workflow its workflow name
 * @param status the state it went to
 * @param stepName the step that failed, or null
 * @param message what went wrong
 * @param at when
 */
public record Alert(
        TaskId taskId, String businessKey, String workflow, TaskStatus status, String stepName, String message, Instant at) {

    /** @throws NullPointerException if {@code taskId}, {@code status} or {@code at} is null */
    public Alert {
        Objects.requireNonNull(taskId, "taskId must not be null");
        Objects.requireNonNull(status, "status must not be null");
        Objects.requireNonNull(at, "at must not be null");
    }
}
