package dev.sas.core.spi;

import dev.sas.core.TaskEvent;
import java.util.Objects;

/**
 * An event a store recorded for a task on its own (parking and unparking), with the task's status
 * channel, so the caller can hand it to listeners once the store call returns. Immutable and
 * thread-safe.
 *
 * @param event the event, as recorded
 * @param statusChannel the task's status channel, or null
 */
public record RecordedEvent(TaskEvent event, String statusChannel) {

    /** @throws NullPointerException if {@code event} is null */
    public RecordedEvent {
        Objects.requireNonNull(event, "event must not be null");
    }
}
