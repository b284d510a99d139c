package dev.sas.core.spi;

import dev.sas.core.StepStatus;
import java.time.Instant;

/**
 * A step row to write with a {@link Transition}. For a step result ({@code compensation} false)
 * the store upserts status, attempts, output, error and times. For a compensation result it sets
 * only the row's compensation status and error, keeping the step's own result. Build one with the
 * named factories ({@link #completed}, {@link #retrying}, {@link #failed}, {@link #skipped},
 * {@link #waiting}, {@link #compensated},
 * {@link #compensationFailed}). Immutable and thread-safe.
 *
 * @param index step position
 * @param name step name
 * @param status the step's state (ignored for compensation results)
 * @param attempts attempts so far
 * @param output recorded output, or null
 * @param error last error, or null
 * @param startedAt start of the attempt
 * @param finishedAt end of the attempt, or null
 * @param compensation whether this is a compensation result
 * @param compensationStatus for compensation results: COMPENSATED or COMPENSATION_FAILED
 */
public record StepUpdate(
        int index,
        String name,
        StepStatus status,
        int attempts,
        String output,
        String error,
        Instant startedAt,
        Instant finishedAt,
        boolean compensation,
        StepStatus compensationStatus) {

    /** The step completed with {@code output}. */
    public static StepUpdate completed(int index, String name, int attempts, String output, Instant startedAt,
            Instant finishedAt) {
        return new StepUpdate(index, name, StepStatus.COMPLETED, attempts, output, null, startedAt, finishedAt, false,
                null);
    }

    /** The attempt failed with {@code error} and the step will be tried again (the step row stays PENDING). */
    public static StepUpdate retrying(int index, String name, int attempts, String error, Instant startedAt,
            Instant finishedAt) {
        return new StepUpdate(index, name, StepStatus.PENDING, attempts, null, error, startedAt, finishedAt, false,
                null);
    }

    /** The step failed for good with {@code error}; {@code startedAt} may be null when unknown (a time-out). */
    public static StepUpdate failed(int index, String name, int attempts, String error, Instant startedAt,
            Instant finishedAt) {
        return new StepUpdate(index, name, StepStatus.FAILED, attempts, null, error, startedAt, finishedAt, false,
                null);
    }

    /** The step was not run: its condition did not hold. A skipped step is never compensated. */
    public static StepUpdate skipped(int index, String name, int attempts, Instant startedAt, Instant finishedAt) {
        return new StepUpdate(index, name, StepStatus.SKIPPED, attempts, null, null, startedAt, finishedAt, false,
                null);
    }

    /**
     * A durable timer waits until {@code firesAt} (database time); the instant is kept as the row's
     * output (ISO-8601), so the node that claims the task next knows when it fires.
     */
    public static StepUpdate waiting(int index, String name, int attempts, Instant firesAt, Instant startedAt) {
        return new StepUpdate(index, name, StepStatus.WAITING, attempts, firesAt.toString(), null, startedAt, null,
                false, null);
    }

    /** The step's compensation ran; its own result is kept. */
    public static StepUpdate compensated(int index, String name, int attempts, Instant startedAt,
            Instant finishedAt) {
        return new StepUpdate(index, name, null, attempts, null, null, startedAt, finishedAt, true,
                StepStatus.COMPENSATED);
    }

    /** The step's compensation failed for good with {@code error}; its own result is kept. */
    public static StepUpdate compensationFailed(int index, String name, int attempts, String error,
            Instant startedAt, Instant finishedAt) {
        return new StepUpdate(index, name, null, attempts, null, error, startedAt, finishedAt, true,
                StepStatus.COMPENSATION_FAILED);
    }
}
