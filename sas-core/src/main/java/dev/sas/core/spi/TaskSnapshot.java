package dev.sas.core.spi;

import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.util.Objects;

/**
 * What a store read of a task row, under its lock (or to fence its write on), for a decision of
 * {@link TaskDecisions}. Immutable and thread-safe.
 *
 * @param status the task's state
 * @param held whether a scheduler (or the awaiting-completion pseudo-holder) holds the task
 * @param nextAttemptAt when the task is due, or null when it is not (held or terminal)
 * @param attempt attempts at the current step
 * @param failureCount time-outs counted at the current step
 * @param cancelRequested whether an operator asked to cancel it
 * @param createdAt when it was submitted
 */
public record TaskSnapshot(TaskStatus status, boolean held, Instant nextAttemptAt, int attempt, int failureCount,
        boolean cancelRequested, Instant createdAt) {

    /**
     * @throws NullPointerException if {@code status} or {@code createdAt} is null
     */
    public TaskSnapshot {
        Objects.requireNonNull(status, "status must not be null");
        Objects.requireNonNull(createdAt, "createdAt must not be null");
    }
}
