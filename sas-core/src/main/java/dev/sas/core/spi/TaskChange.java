package dev.sas.core.spi;

import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.util.Objects;

/**
 * A change of a task row that {@link TaskDecisions} decided, for the store to apply as it is: a
 * store writes exactly these fields (and its own {@code updated_at}), fenced on the
 * {@link TaskSnapshot} it decided from. Immutable and thread-safe.
 *
 * @param status the new state
 * @param nextAttemptAt when the task is due, or null when it is not
 * @param attempt attempts at the current step
 * @param failureCount time-outs counted at the current step
 * @param cancelRequested whether a cancel is requested
 * @param releaseHolder true to clear the holder and its deadline ({@code locked_by}, {@code complete_by})
 * @param lastError the new last error, or null to keep the task's
 */
public record TaskChange(TaskStatus status, Instant nextAttemptAt, int attempt, int failureCount,
        boolean cancelRequested, boolean releaseHolder, String lastError) {

    /**
     * @throws NullPointerException if {@code status} is null
     */
    public TaskChange {
        Objects.requireNonNull(status, "status must not be null");
    }

    /** The fields of {@code s} unchanged, as the start of a decision. */
    static TaskChange keeping(TaskSnapshot s) {
        return new TaskChange(s.status(), s.nextAttemptAt(), s.attempt(), s.failureCount(), s.cancelRequested(),
                false, null);
    }

    TaskChange withStatus(TaskStatus value) {
        return new TaskChange(value, nextAttemptAt, attempt, failureCount, cancelRequested, releaseHolder, lastError);
    }

    TaskChange withDueAt(Instant value) {
        return new TaskChange(status, value, attempt, failureCount, cancelRequested, releaseHolder, lastError);
    }

    TaskChange withCounts(int newAttempt, int newFailureCount) {
        return new TaskChange(status, nextAttemptAt, newAttempt, newFailureCount, cancelRequested, releaseHolder,
                lastError);
    }

    TaskChange withCancelRequested() {
        return new TaskChange(status, nextAttemptAt, attempt, failureCount, true, releaseHolder, lastError);
    }

    TaskChange withHolderReleased() {
        return new TaskChange(status, nextAttemptAt, attempt, failureCount, cancelRequested, true, lastError);
    }

    TaskChange withLastError(String value) {
        return new TaskChange(status, nextAttemptAt, attempt, failureCount, cancelRequested, releaseHolder, value);
    }
}
