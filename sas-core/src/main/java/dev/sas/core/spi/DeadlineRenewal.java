package dev.sas.core.spi;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.util.Objects;

/**
 * A new deadline ({@code completeBy}) for a task its holder claimed but has not started yet: the
 * step starts late, so its deadline restarts at the start ({@link StateStore#renewDeadlines}), or
 * it still waits for a thread, so its reservation is extended. Fenced like a transition: it
 * applies only while the task is still held by {@code holder} under {@code lease}, at
 * {@code step}, in {@code status}, and its deadline has not passed. Immutable and thread-safe.
 *
 * @param taskId the task
 * @param holder the runtime that claimed it ({@code locked_by})
 * @param lease the claim's lease
 * @param status the state the task is in ({@code PROCESSING} or {@code COMPENSATING})
 * @param step the step (or compensation) it is at
 * @param completeBy the new deadline, computed on the store's clock
 */
public record DeadlineRenewal(TaskId taskId, String holder, long lease, TaskStatus status, int step,
        Instant completeBy) {

    /**
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code step} is negative
     */
    public DeadlineRenewal {
        Objects.requireNonNull(taskId, "taskId must not be null");
        Objects.requireNonNull(holder, "holder must not be null");
        Objects.requireNonNull(status, "status must not be null");
        Objects.requireNonNull(completeBy, "completeBy must not be null");
        if (step < 0) {
            throw new IllegalArgumentException("step must not be negative, was " + step);
        }
    }

    /** What became of a {@link DeadlineRenewal}. */
    public enum Outcome {
        /**
         * The task's deadline is now {@link DeadlineRenewal#completeBy()}: written now, or by an
         * identical renewal before (a replay changes nothing and is answered the same).
         */
        RENEWED,
        /**
         * Nothing written: the task is no longer held by the holder under that lease, step and
         * state, or its deadline had passed (a supervisor may be recovering it). The holder must
         * not start the step.
         */
        STALE
    }
}
