package dev.sas.core;

import dev.sas.core.internal.DatabaseClock;
import dev.sas.core.internal.FireTimes;
import dev.sas.core.internal.PayloadLimit;
import dev.sas.core.internal.ScheduleFirer;
import dev.sas.core.internal.StoredMissedFires;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.ScheduleStore;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StoredSchedule;
import dev.sas.core.spi.SubmitResult;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The recurring schedules of a store, from any tier: register, list, pause, resume, trigger now and
 * remove ({@link SasClient#schedules()}). Runtimes fire them (the one holding the supervisor lease,
 * on the database's clock); this type only reads and changes their definitions and state. Times are
 * the store's. Thread-safe.
 *
 * <pre>{@code
 * SasSchedules schedules = client.schedules();
 * schedules.register(nightly);              // idempotent: every node may do it at start
 * schedules.pause("nightly-reconciliation");
 * TaskHandle now = schedules.trigger("nightly-reconciliation");
 * }</pre>
 */
public final class SasSchedules {
    private static final Logger log = LoggerFactory.getLogger(SasSchedules.class);

    private final SasClient client;
    private final StateStore store;
    private final DatabaseClock clock;
    private final PayloadLimit payloadLimit;
    private final ClientHooks hooks;

    SasSchedules(SasClient client, StateStore store, DatabaseClock clock, PayloadLimit payloadLimit, ClientHooks hooks) {
        this.client = client;
        this.store = store;
        this.clock = clock;
        this.payloadLimit = payloadLimit;
        this.hooks = hooks;
    }

    private ScheduleStore schedules() {
        return store.schedules().orElseThrow(() -> new UnsupportedOperationException("the store " + store
                + " keeps no recurring schedules; use a store that does (JdbcStateStore, InMemoryStateStore)"));
    }

    private Instant now() {
        clock.ensureFresh();
        return clock.instant();
    }

    /**
     * Registers the schedule on the store, or replaces its definition if a schedule of that name was
     * registered with another one (its paused state and last fire time are kept). Registering the
     * same schedule again, from this node or another, writes nothing, so every node may register its
     * schedules at start.
     *
     * @return the schedule as now registered
     * @throws NullPointerException if {@code schedule} is null
     * @throws IllegalArgumentException if its encoded input is over the client's {@code maxPayloadBytes}
     * @throws UnsupportedOperationException if the store keeps no schedules
     * @throws StateStoreException if the store failed
     */
    public ScheduleInfo register(Schedule schedule) {
        Objects.requireNonNull(schedule, "schedule must not be null");
        int bytes = payloadLimit.excess(schedule.spec().input());
        if (bytes >= 0) {
            throw new IllegalArgumentException(payloadLimit.message("input of schedule '" + schedule.name() + "'", bytes));
        }
        ScheduleStore.Registration r = schedules().register(schedule.spec(), now());
        if (r != ScheduleStore.Registration.UNCHANGED) {
            log.info("schedule '{}' {}: {}", schedule.name(), r == ScheduleStore.Registration.CREATED ? "registered"
                    : "updated", schedule);
        }
        return find(schedule.name()).orElseThrow(() -> new ScheduleNotFoundException(schedule.name()));
    }

    /**
     * Every registered schedule, ordered by name.
     *
     * @throws UnsupportedOperationException if the store keeps no schedules
     * @throws StateStoreException if the store failed
     */
    public List<ScheduleInfo> list() {
        return schedules().schedules().stream().map(SasSchedules::info).toList();
    }

    /**
     * The schedule of that name.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws UnsupportedOperationException if the store keeps no schedules
     * @throws StateStoreException if the store failed
     */
    public Optional<ScheduleInfo> find(String name) {
        Objects.requireNonNull(name, "name must not be null");
        return schedules().find(name).map(SasSchedules::info);
    }

    /**
     * Pauses the schedule: no fire time is submitted until it is resumed. Pausing a paused schedule
     * changes nothing.
     *
     * @throws ScheduleNotFoundException if no schedule has that name
     * @throws StateStoreException if the store failed
     */
    public void pause(String name) {
        Objects.requireNonNull(name, "name must not be null");
        if (!schedules().setPaused(name, true, now())) {
            throw new ScheduleNotFoundException(name);
        }
        log.info("schedule '{}' paused", name);
    }

    /**
     * Resumes a paused schedule from now: fire times that passed while it was paused are not
     * submitted (trigger it to run one now). Resuming a running schedule changes nothing.
     *
     * @throws ScheduleNotFoundException if no schedule has that name
     * @throws StateStoreException if the store failed
     */
    public void resume(String name) {
        Objects.requireNonNull(name, "name must not be null");
        if (!schedules().setPaused(name, false, now())) {
            throw new ScheduleNotFoundException(name);
        }
        log.info("schedule '{}' resumed", name);
    }

    /**
     * Submits the schedule's task now, outside its fire times (also while it is paused), with the
     * business key {@code <name>@triggered-<now>}. Its fire times are unchanged.
     *
     * @return a handle to the task
     * @throws ScheduleNotFoundException if no schedule has that name
     * @throws StateStoreException if the store failed; the task may then not exist
     */
    public TaskHandle trigger(String name) {
        Objects.requireNonNull(name, "name must not be null");
        StoredSchedule s = schedules().find(name).orElseThrow(() -> new ScheduleNotFoundException(name));
        Instant now = now();
        NewTask task = ScheduleFirer.task(s.spec(), name + "@triggered-" + now, now);
        TaskEvent received = ScheduleFirer.received(task);
        SubmitResult result = store.submit(task, received, null);
        if (result.created()) {
            hooks.submitted(List.of(received), null, true, false);
        }
        log.info("schedule '{}' triggered: task {}", name, result.taskId());
        return new TaskHandle(client, result.taskId(), result.created());
    }

    /**
     * Removes the schedule; the tasks it submitted stay. A node that registers it again at its next
     * start brings it back: remove it from the code (or the Spring context) too.
     *
     * @return false if no schedule had that name
     * @throws StateStoreException if the store failed
     */
    public boolean remove(String name) {
        Objects.requireNonNull(name, "name must not be null");
        boolean removed = schedules().remove(name);
        if (removed) {
            log.info("schedule '{}' removed", name);
        }
        return removed;
    }

    private static ScheduleInfo info(StoredSchedule s) {
        Instant next;
        try {
            next = FireTimes.of(s.spec().trigger(), s.spec().zone(), s.registeredAt()).next(s.lastFireTime());
        } catch (RuntimeException e) {
            next = null; // a definition this version cannot read (written by a newer one)
        }
        StoredMissedFires missed = StoredMissedFires.parse(s.spec().missedFires());
        return new ScheduleInfo(s.name(), s.spec().workflow(), s.spec().workflowVersion(), s.spec().trigger(),
                s.spec().zone(), missed.policy(), missed.missedAfter(), s.paused(), s.lastFireTime(), next,
                s.registeredAt(), s.updatedAt());
    }

    @Override
    public String toString() {
        return "SasSchedules{" + store + '}';
    }
}
