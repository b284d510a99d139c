package dev.sas.core.spi;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The recurring schedules of a {@link StateStore} ({@link StateStore#schedules()}), shared by every
 * runtime on the store. The store keeps definitions and each schedule's last decided fire time; it
 * decides nothing about cron expressions or policies. Exactly-once submission per fire time does
 * not rest on this interface: the runtime submits each fire time's task under a business key made of
 * the schedule's name and the fire time, which the task table keeps unique, and only then moves
 * {@link StoredSchedule#lastFireTime()} on with {@link #advance} (compare-and-set).
 *
 * <p>Times are the store's ({@link StateStore#currentTime()}), passed in by the caller, at
 * millisecond precision. Implementations are thread-safe and checked by
 * {@code ScheduleStoreContract} in {@code sas-testing}.
 */
public interface ScheduleStore {

    /** What a {@link #register} did. */
    enum Registration {
        /** The schedule did not exist: it was inserted, not paused, its last fire time {@code now}. */
        CREATED,
        /** It existed with another definition: the definition was replaced; paused state and last fire time kept. */
        UPDATED,
        /** It existed with this very definition: nothing was written. */
        UNCHANGED
    }

    /**
     * Inserts the schedule, or replaces the definition of the schedule of that name if it differs,
     * atomically: nodes registering the same schedule at once create it once, and a registration
     * repeated (every node does it at start) writes nothing.
     *
     * @throws NullPointerException if an argument is null
     */
    Registration register(ScheduleSpec spec, Instant now);

    /** Every schedule, ordered by name. */
    List<StoredSchedule> schedules();

    /** The schedule of that name, if registered. */
    Optional<StoredSchedule> find(String name);

    /**
     * Moves the schedule's last fire time from {@code expected} to {@code to}, only if it is still
     * {@code expected} (another node may have moved it: then nothing changes).
     *
     * @return true if written
     */
    boolean advance(String name, Instant expected, Instant to, Instant now);

    /**
     * Pauses or resumes the schedule. Resuming a paused schedule sets its last fire time to
     * {@code now}: fire times that passed while it was paused are not submitted. Pausing a paused
     * schedule or resuming a running one changes nothing.
     *
     * @return false if no schedule has that name
     */
    boolean setPaused(String name, boolean paused, Instant now);

    /**
     * Deletes the schedule (tasks it submitted stay).
     *
     * @return false if no schedule has that name
     */
    boolean remove(String name);
}
