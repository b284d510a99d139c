package dev.sas.core.spi;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.util.Objects;

/**
 * A completion of a step that awaits one ({@code StepBuilder.awaitCompletion}), as a store keeps it: which
 * attempt it answers (task, step, lease) and what it says. A store keeps one per attempt, so a
 * second completion to the same attempt is recognised as a duplicate. Immutable.
 *
 * @param taskId the task
 * @param step the step index the completion token named
 * @param lease the lease the completion token named (the attempt's fencing token)
 * @param kind what the completion says
 * @param payload the encoded output for {@link Kind#COMPLETED}, else the error; may be null
 * @param receivedAt when it arrived (the store's time)
 */
public record StepCompletion(TaskId taskId, int step, long lease, Kind kind, String payload, Instant receivedAt) {

    /** @throws NullPointerException if {@code taskId}, {@code kind} or {@code receivedAt} is null */
    public StepCompletion {
        Objects.requireNonNull(taskId, "taskId must not be null");
        Objects.requireNonNull(kind, "kind must not be null");
        Objects.requireNonNull(receivedAt, "receivedAt must not be null");
    }

    /**
     * The checks every store makes, in this order, on this completion against the task it read under lock,
     * before it keeps or applies the completion: a completion already kept for this attempt is a
     * {@link CompletionWrite.Kind#DUPLICATE}; a task not held ({@code held} false) or held for another
     * lease, step or state than {@code AWAITING_COMPLETION} or {@code PROCESSING} is
     * {@link CompletionWrite.Kind#STALE}; a deadline before {@code now} (or none) is
     * {@link CompletionWrite.Kind#LATE}. Shared so that every store answers a completion alike.
     *
     * @param target the task as read under lock
     * @param held whether the task row names a holder (a scheduler or the awaiting pseudo-holder)
     * @param duplicate whether a completion of this attempt is already kept
     * @param now the store's time
     * @return the answer that ends the completion here, or null when it may be kept ({@code PROCESSING})
     *     or applied ({@code AWAITING_COMPLETION})
     */
    public CompletionWrite.Kind refusal(CompletionTarget target, boolean held, boolean duplicate, Instant now) {
        if (duplicate) {
            return CompletionWrite.Kind.DUPLICATE;
        }
        if (target.lease() != lease || target.currentStep() != step || !held
                || (target.status() != TaskStatus.AWAITING_COMPLETION && target.status() != TaskStatus.PROCESSING)) {
            return CompletionWrite.Kind.STALE;
        }
        if (target.completeBy() == null || target.completeBy().isBefore(now)) {
            return CompletionWrite.Kind.LATE;
        }
        return null;
    }

    /** What a completion says. */
    public enum Kind {
        /** The step completed; the payload is its encoded output. */
        COMPLETED,
        /** The attempt failed; the step's retry policy decides. The payload is the error. */
        FAILED,
        /** The attempt failed and must not be retried. The payload is the error. */
        FAILED_FOR_GOOD
    }
}
