package dev.sas.core;

import java.util.Objects;

/**
 * One status message of a status channel: a task's event, as the store recorded it with the
 * transition, and the id of its delivery. A channel receives each task's messages in order, at
 * least once: a message delivered again (after a consumer crashed before acknowledging it, or a
 * broker was down) carries the same {@link #deliveryId()}, so a consumer drops repeats by it.
 * Immutable and thread-safe.
 *
 * @param channel the status channel's name
 * @param deliveryId unique per store, and increasing within each task's messages in the order of
 *     its events; the same on every repeat of this message
 * @param event the task's event (task id, business key, workflow, step, status and time)
 */
public record StatusUpdate(String channel, long deliveryId, TaskEvent event) {

    /** @throws NullPointerException if {@code channel} or {@code event} is null */
    public StatusUpdate {
        Objects.requireNonNull(channel, "channel must not be null");
        Objects.requireNonNull(event, "event must not be null");
    }

    /** The task this message is about. */
    public TaskId taskId() {
        return event.taskId();
    }

    /** What happened to the task: received, step started or completed, processed, failed, ... */
    public TaskEvent.Type status() {
        return event.type();
    }

    /** True if the task ended with this message (PROCESSED, ERROR, COMPENSATED, COMPENSATION_FAILED, CANCELLED). */
    public boolean isTerminal() {
        return switch (event.type()) {
            case PROCESSED, ERROR, COMPENSATED, COMPENSATION_FAILED, CANCELLED -> true;
            default -> false;
        };
    }
}
