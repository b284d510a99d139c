package dev.sas.core.spi;

import dev.sas.core.StepStatus;
import java.time.Instant;

/**
 * A step row to write with a {@link Transition}. For a step result ({@code compensation} false)
 * the store upserts status, attempts, output, error and times. For a compensation result it sets
 * only the row's compensation status and error, keeping the step's own result.
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
}
