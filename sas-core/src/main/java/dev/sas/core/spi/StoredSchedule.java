package dev.sas.core.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * A schedule as the store holds it: its definition and its state. Immutable and thread-safe.
 *
 * @param spec the definition last registered
 * @param paused true while paused: no fire time is submitted
 * @param lastFireTime the latest fire time already decided (submitted, or skipped by the missed-fire
 *     policy); at registration and resumption, the store's time then. Fire times after it are due
 * @param registeredAt when the schedule was first registered (an interval counts from it)
 * @param updatedAt when its definition or state last changed
 */
public record StoredSchedule(ScheduleSpec spec, boolean paused, Instant lastFireTime, Instant registeredAt,
        Instant updatedAt) {

    /** @throws NullPointerException if an argument is null */
    public StoredSchedule {
        Objects.requireNonNull(spec, "spec must not be null");
        Objects.requireNonNull(lastFireTime, "lastFireTime must not be null");
        Objects.requireNonNull(registeredAt, "registeredAt must not be null");
        Objects.requireNonNull(updatedAt, "updatedAt must not be null");
    }

    /** The schedule's name. */
    public String name() {
        return spec.name();
    }
}
