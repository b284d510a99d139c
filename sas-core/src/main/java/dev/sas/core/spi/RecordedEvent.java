package dev.sas.core.spi;

import dev.sas.core.TaskEvent;
import java.util.Objects;

/**
 * An event a store recorded for a task on its own (parking and unparking), with the task's reply
 * channel, so the caller can hand it to listeners once the store call returns. Immutable and
 * thread-safe.
 *
 * @param event the event, as recorded
 * @param replyTo the task's reply channel, or null
 */
public record RecordedEvent(TaskEvent event, String replyTo) {

    /** @throws NullPointerException if {@code event} is null */
    public RecordedEvent {
        Objects.requireNonNull(event, "event must not be null");
    }
}
