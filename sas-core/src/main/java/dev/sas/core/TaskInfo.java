package dev.sas.core;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A snapshot of a task and its steps, for status pages and operators.
 *
 * @param taskId the task
 * @param workflow the workflow name
 * @param workflowVersion the workflow version it was submitted with
 * @param businessKey the business key
 * @param status the task's state
 * @param priority higher runs first
 * @param currentStep index of the step running or next to run (or being compensated)
 * @param failureCount how many times the supervisor found the current step past its deadline
 * @param lockedBy the instance holding the task, or null
 * @param lease the fencing token of the current or last claim (a move to another version increments it too)
 * @param completeBy deadline of the current attempt, or null
 * @param nextAttemptAt when the task is next due, or null
 * @param createdAt when it was submitted
 * @param updatedAt when it last changed
 * @param lastError the last error recorded, or null
 * @param cancelRequested whether an operator asked to cancel it
 * @param steps every step of the workflow, including those not started
 * @param attempt attempts made at the current step (or its compensation) in this run of it; in
 *     {@code ERROR}, only those whose effect may have applied (0 after a definite failure), which is
 *     what a later cancel, or the group step of a branch or fan-out element, compensates
 */
public record TaskInfo(
        TaskId taskId,
        String workflow,
        int workflowVersion,
        String businessKey,
        TaskStatus status,
        int priority,
        int currentStep,
        int failureCount,
        String lockedBy,
        long lease,
        Instant completeBy,
        Instant nextAttemptAt,
        Instant createdAt,
        Instant updatedAt,
        String lastError,
        boolean cancelRequested,
        List<StepInfo> steps,
        int attempt) {

    /** @throws NullPointerException if {@code taskId}, {@code status} or {@code steps} is null */
    public TaskInfo {
        Objects.requireNonNull(taskId, "taskId must not be null");
        Objects.requireNonNull(status, "status must not be null");
        steps = List.copyOf(Objects.requireNonNull(steps, "steps must not be null"));
    }

    /**
     * A snapshot without the current step's {@link #attempt} (0), as before 0.3.
     *
     * @throws NullPointerException if {@code taskId}, {@code status} or {@code steps} is null
     */
    public TaskInfo(TaskId taskId, String workflow, int workflowVersion, String businessKey, TaskStatus status,
            int priority, int currentStep, int failureCount, String lockedBy, long lease, Instant completeBy,
            Instant nextAttemptAt, Instant createdAt, Instant updatedAt, String lastError, boolean cancelRequested,
            List<StepInfo> steps) {
        this(taskId, workflow, workflowVersion, businessKey, status, priority, currentStep, failureCount, lockedBy,
                lease, completeBy, nextAttemptAt, createdAt, updatedAt, lastError, cancelRequested, steps, 0);
    }

    /**
     * The step with this name.
     *
     * @throws IllegalArgumentException if there is none
     */
    public StepInfo step(String name) {
        for (StepInfo s : steps) {
            if (s.name().equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("task " + taskId + " has no step '" + name + "'");
    }

    /**
     * One step of a task.
     *
     * @param index position from 0
     * @param name step name
     * @param status the step's state
     * @param attempts attempts made so far
     * @param output recorded output, or null
     * @param error last error, or null
     * @param startedAt when the last attempt started, or null
     * @param finishedAt when it completed or failed, or null
     * @param compensationStatus {@code COMPENSATED}, {@code COMPENSATION_FAILED}, or null
     */
    public record StepInfo(
            int index,
            String name,
            StepStatus status,
            int attempts,
            String output,
            String error,
            Instant startedAt,
            Instant finishedAt,
            StepStatus compensationStatus) {
    }
}
