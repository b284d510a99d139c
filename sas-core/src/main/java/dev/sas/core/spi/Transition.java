package dev.sas.core.spi;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One conditional change of a task, with its step row and events, written atomically. The store
 * applies it only if the task still has {@link #lease()} and the {@link #guard()} holds;
 * otherwise it changes nothing and reports {@link WriteOutcome#STALE} (the fencing rule).
 *
 * @param taskId the task
 * @param lease the lease the writer holds (or, for the supervisor, saw expire)
 * @param fromStep the step the writer saw the task at; the write applies only if the task is
 *     still there, so a replayed write (say, after a lost commit acknowledgement) is stale
 * @param guard which condition besides the lease must hold
 * @param unlessCancelRequested also require that no cancel was requested; if one was, change
 *     nothing and report {@link WriteOutcome#CANCEL_REQUESTED}
 * @param status the task's new state
 * @param keepLock true to keep holding the task (it moves on to its next step in the same
 *     claim: {@code completeBy = now + stepTimeout}); false to release it
 * @param currentStep the step to run next (or compensate next)
 * @param currentStepName its name (for event rows written at the next claim); may be null when terminal
 * @param attempt attempts at {@code currentStep} so far (1 when kept locked for a new step)
 * @param failureCount supervisor time-outs of {@code currentStep} so far
 * @param stepTimeout deadline of one attempt at {@code currentStep}
 * @param nextAttemptAt when a released, non-terminal task is due again
 * @param lastError error to record on the task, or null to keep the current one
 * @param step step row to write, or null
 * @param events events to append, in order
 */
public record Transition(
        TaskId taskId,
        long lease,
        int fromStep,
        Guard guard,
        boolean unlessCancelRequested,
        TaskStatus status,
        boolean keepLock,
        int currentStep,
        String currentStepName,
        int attempt,
        int failureCount,
        Duration stepTimeout,
        Instant nextAttemptAt,
        String lastError,
        StepUpdate step,
        List<TaskEvent> events) {

    /** @throws NullPointerException if a required field is null */
    public Transition {
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(guard, "guard");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(stepTimeout, "stepTimeout");
        events = List.copyOf(events);
        if (keepLock && status.isTerminal()) {
            throw new IllegalArgumentException("a terminal transition cannot keep the lock: " + status);
        }
    }

    /** Which condition, besides an unchanged lease, a transition requires. */
    public enum Guard {
        /** The writer still holds the claim: locked, and {@code completeBy >= now}. */
        HOLDER,
        /** The supervisor recovers an expired claim: locked, and {@code completeBy < now}. */
        EXPIRED
    }
}
