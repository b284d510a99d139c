package dev.sas.core.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.ScheduleSpec;
import dev.sas.core.spi.ScheduleStore;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StoredSchedule;
import dev.sas.core.spi.SubmitResult;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fires the store's recurring schedules: for each schedule that is not paused, submits one task per
 * fire time due since its last decided fire time ({@link FirePlan}), then moves that time on
 * (compare-and-set). The active supervisor runs it on each pass, on the store's clock. Exactly once
 * per fire time comes from the task's business key ({@link #businessKey}), unique per workflow in
 * every store, not from the lease: two nodes firing at once, or a node dying between the submit and
 * the move, submit nothing twice. One failing schedule never holds back the others. Not API.
 */
public final class ScheduleFirer {
    private static final Logger log = LoggerFactory.getLogger(ScheduleFirer.class);

    private final ScheduleStore schedules;
    private final StateStore store;
    private final String instanceId;
    private final Consumer<List<TaskEvent>> submitted;
    private final Metrics metrics;

    /**
     * @param metrics counts the fire times submitted and skipped
     * @param submitted told of the RECEIVED events of the tasks created (listeners, the scheduler)
     */
    public ScheduleFirer(ScheduleStore schedules, StateStore store, String instanceId, Metrics metrics,
            Consumer<List<TaskEvent>> submitted) {
        this.metrics = metrics;
        this.schedules = schedules;
        this.store = store;
        this.instanceId = instanceId;
        this.submitted = submitted;
    }

    /** The business key of the task of {@code fireTime}: {@code <schedule>@<fire time>}. */
    public static String businessKey(String schedule, Instant fireTime) {
        return schedule + "@" + fireTime;
    }

    /** The task a schedule submits under {@code businessKey}, created and due at {@code now}. */
    public static NewTask task(ScheduleSpec s, String businessKey, Instant now) {
        return new NewTask(TaskId.random(), s.workflow(), s.workflowVersion(), businessKey, s.priority(), s.input(),
                null, s.firstStepName(), s.firstStepTimeout(), now, now);
    }

    /** The RECEIVED event of {@code t}. */
    public static TaskEvent received(NewTask t) {
        return new TaskEvent(t.taskId(), t.businessKey(), t.workflow(), TaskEvent.Type.RECEIVED, -1, null, 0,
                t.createdAt(), null);
    }

    /**
     * Submits the due fire times of every schedule that is not paused.
     *
     * @param now the store's time
     * @return how many tasks were created (fire times another node submitted first not counted)
     */
    public int fireDue(Instant now) {
        int created = 0;
        for (StoredSchedule s : schedules.schedules()) {
            if (s.paused()) {
                continue;
            }
            try {
                created += fire(s, now);
            } catch (RuntimeException e) {
                log.warn("instance {}: schedule '{}' could not be fired ({}); trying again on the next pass",
                        instanceId, s.name(), e.toString());
            }
        }
        return created;
    }

    private int fire(StoredSchedule s, Instant now) {
        ScheduleSpec spec = s.spec();
        FireTimes times = FireTimes.of(spec.trigger(), spec.zone(), s.registeredAt());
        StoredMissedFires missed = StoredMissedFires.parse(spec.missedFires());
        FirePlan plan = FirePlan.of(times, s.lastFireTime(), now, missed.policy().keep(), missed.missedAfter());
        if (plan.lastDecided() == null) {
            return 0;
        }
        List<NewTask> tasks = new ArrayList<>(plan.fire().size());
        List<TaskEvent> received = new ArrayList<>(plan.fire().size());
        for (Instant f : plan.fire()) {
            NewTask t = task(spec, businessKey(spec.name(), f), now);
            tasks.add(t);
            received.add(received(t));
        }
        List<TaskEvent> createdEvents = new ArrayList<>();
        if (!tasks.isEmpty()) {
            List<SubmitResult> results = store.submitAll(tasks, received, null);
            for (int i = 0; i < results.size(); i++) {
                if (results.get(i).created()) {
                    createdEvents.add(received.get(i));
                    NewTask t = tasks.get(i);
                    Instant f = plan.fire().get(i);
                    TaskLog.run(t.taskId(), t.workflow(), 0, 0, () -> log.debug("schedule '{}': task {} submitted for"
                            + " fire time {}", spec.name(), t.taskId(), f));
                }
            }
        }
        if (plan.skipped() > 0) {
            log.info("instance {}: schedule '{}' missed fire times from {} until {} (more than {} late); {} skipped"
                    + ", {} submitted, as its missed-fire policy {} says", instanceId, spec.name(),
                    s.lastFireTime(), now.minus(missed.missedAfter()), missed.missedAfter(), plan.skipped(),
                    plan.fire().size(), missed.policy());
        }
        if (!schedules.advance(spec.name(), s.lastFireTime(), plan.lastDecided(), now)) {
            log.debug("schedule '{}': another node moved its last fire time meanwhile", spec.name());
        }
        metrics.scheduleFires(createdEvents.size(), plan.skipped());
        if (!createdEvents.isEmpty()) {
            submitted.accept(createdEvents);
        }
        return createdEvents.size();
    }
}
