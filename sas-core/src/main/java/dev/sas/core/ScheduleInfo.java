package dev.sas.core;

import java.time.Duration;
import java.time.Instant;

/**
 * A registered schedule as the store holds it, for listing ({@link SasSchedules#list()}), the console
 * and the CLI. Immutable and thread-safe.
 *
 * @param name the schedule's name
 * @param workflow the workflow of the tasks it submits
 * @param workflowVersion that workflow's version
 * @param trigger when it fires: {@code cron:<expression>} or {@code every:<ISO-8601 duration>}
 * @param zone the time zone of its cron expression, or null for an interval
 * @param missedFires its missed-fire policy
 * @param missedAfter how late a fire time may be submitted before it counts as missed
 * @param paused true while paused
 * @param lastFireTime the latest fire time decided (submitted or skipped), or the time it was
 *     registered or resumed
 * @param nextFireTime the next fire time after {@code lastFireTime}, or null if there is none
 * @param registeredAt when it was first registered
 * @param updatedAt when its definition or state last changed
 */
public record ScheduleInfo(String name, String workflow, int workflowVersion, String trigger, String zone,
        MissedFires missedFires, Duration missedAfter, boolean paused, Instant lastFireTime, Instant nextFireTime, Instant registeredAt,
        Instant updatedAt) {
}
