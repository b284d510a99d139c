package dev.sas.core.spi;

import dev.sas.core.TaskId;
import java.time.Instant;
import java.util.Objects;

/**
 * A reply to a step that awaits one ({@code StepBuilder.awaitReply}), as a store keeps it: which
 * attempt it answers (task, step, lease) and what it says. A store keeps one per attempt, so a
 * second reply to the same attempt is recognised as a duplicate. Immutable.
 *
 * @param taskId the task
 * @param step the step index the reply token named
 * @param lease the lease the reply token named (the attempt's fencing token)
 * @param kind what the reply says
 * @param payload the encoded output for {@link Kind#COMPLETED}, else the error; may be null
 * @param receivedAt when it arrived (the store's time)
 */
public record StepReply(TaskId taskId, int step, long lease, Kind kind, String payload, Instant receivedAt) {

    /** @throws NullPointerException if {@code taskId}, {@code kind} or {@code receivedAt} is null */
    public StepReply {
        Objects.requireNonNull(taskId, "taskId must not be null");
        Objects.requireNonNull(kind, "kind must not be null");
        Objects.requireNonNull(receivedAt, "receivedAt must not be null");
    }

    /** What a reply says. */
    public enum Kind {
        /** The step completed; the payload is its encoded output. */
        COMPLETED,
        /** The attempt failed; the step's retry policy decides. The payload is the error. */
        FAILED,
        /** The attempt failed and must not be retried. The payload is the error. */
        FAILED_FOR_GOOD
    }
}
