package dev.sas.core.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * What a recurring schedule is, as a store keeps it: its name, the task it submits per fire time,
 * when it fires and what happens to fire times missed in an outage. The store compares it whole to
 * decide whether a registration changed anything ({@link ScheduleStore#register}); it never
 * interprets {@code trigger} or {@code missedFires}. Immutable and thread-safe.
 *
 * @param name the schedule's unique name
 * @param workflow the workflow of the tasks it submits
 * @param workflowVersion that workflow's version
 * @param input the encoded input of every task it submits
 * @param priority the tasks' priority
 * @param firstStepName the name of the workflow's step 0 (written into a claim's event)
 * @param firstStepTimeout the deadline of one attempt at step 0
 * @param trigger when it fires: {@code cron:<expression>} or {@code every:<ISO-8601 duration>}
 * @param zone the time zone of a cron expression ({@link java.time.ZoneId} text), or null for an interval
 * @param missedFires the missed-fire policy ({@code SKIP}, {@code RUN_ONCE}, {@code RUN_EACH:<n>})
 */
public record ScheduleSpec(String name, String workflow, int workflowVersion, String input, int priority,
        String firstStepName, Duration firstStepTimeout, String trigger, String zone, String missedFires) {

    /** @throws NullPointerException if a field other than {@code zone} is null */
    public ScheduleSpec {
        Objects.requireNonNull(name, "name must not be null");
        Objects.requireNonNull(workflow, "workflow must not be null");
        Objects.requireNonNull(input, "input must not be null");
        Objects.requireNonNull(firstStepName, "firstStepName must not be null");
        Objects.requireNonNull(firstStepTimeout, "firstStepTimeout must not be null");
        Objects.requireNonNull(trigger, "trigger must not be null");
        Objects.requireNonNull(missedFires, "missedFires must not be null");
    }
}
