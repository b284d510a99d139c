package dev.sas.core.internal;

import dev.sas.core.Alert;
import dev.sas.core.RetryPolicy;
import dev.sas.core.StepBuilder;
import dev.sas.core.StepDefinition;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Supervisor role: while it holds the store's supervisor lease, finds claims whose deadline
 * passed (hung steps, dead nodes), counts the time-out, and releases the task for a retry after a
 * backoff, or past the step's failure threshold fails it (compensating when the workflow says so)
 * and alerts. Every write is conditional on the expired lease, so two supervisors never recover
 * the same claim twice. Also purges final tasks past their retention. Knows no business logic.
 */
public final class Supervisor {
    private static final Logger log = LoggerFactory.getLogger(Supervisor.class);
    private static final int PURGE_BATCH = 500;
    private static final Duration PURGE_EVERY = Duration.ofMinutes(1);

    private final StateStore store;
    private final Registry registry;
    private final Clock clock;
    private final String instanceId;
    private final EventBus events;
    private final Metrics metrics;
    private final Duration leaseTtl;
    private final int batch;
    private final Duration retention;
    private final Consumer<Instant> wakeScheduler;
    private boolean leader;
    private Instant nextPurge = Instant.MIN;

    /** A supervisor; call {@link #runOnce()} on its interval. */
    public Supervisor(StateStore store, Registry registry, Clock clock, String instanceId, EventBus events,
            Metrics metrics, Duration leaseTtl, int batch, Duration retention, Consumer<Instant> wakeScheduler) {
        this.store = store;
        this.registry = registry;
        this.clock = clock;
        this.instanceId = instanceId;
        this.events = events;
        this.metrics = metrics;
        this.leaseTtl = leaseTtl;
        this.batch = batch;
        this.retention = retention;
        this.wakeScheduler = wakeScheduler;
    }

    /**
     * One pass: take or renew the lease, recover every expired claim, purge if due.
     *
     * @return how many claims were recovered
     */
    public synchronized int runOnce() {
        Instant now = clock.instant();
        if (!store.tryAcquireSupervisorLease(instanceId, now, leaseTtl)) {
            if (leader) {
                log.info("instance {} is no longer the active supervisor", instanceId);
                leader = false;
            }
            return 0;
        }
        if (!leader) {
            log.info("instance {} is now the active supervisor", instanceId);
            leader = true;
        }
        int recovered = 0;
        Instant firstDue = null;
        while (true) {
            List<ExpiredTask> expired = store.findExpired(now, batch);
            if (expired.isEmpty()) {
                break;
            }
            List<Transition> transitions = new ArrayList<>(expired.size());
            List<Alert> alerts = new ArrayList<>(expired.size());
            for (ExpiredTask e : expired) {
                transitions.add(recover(e, now, alerts));
            }
            List<WriteOutcome> outcomes = store.write(transitions, now);
            int applied = 0;
            for (int i = 0; i < outcomes.size(); i++) {
                Transition t = transitions.get(i);
                ExpiredTask e = expired.get(i);
                if (outcomes.get(i) == WriteOutcome.APPLIED) {
                    applied++;
                    metrics.timeoutsRecovered.increment();
                    switch (t.status()) {
                        case ERROR -> metrics.errors.increment();
                        case COMPENSATION_FAILED -> metrics.compensationFailed.increment();
                        case CANCELLED -> metrics.compensated.increment();
                        default -> { }
                    }
                    log.info("task {} step {}: claim by {} expired at {}; now {}", e.taskId(), e.currentStep(),
                            e.lockedBy(), e.completeBy(), t.status());
                    if (t.nextAttemptAt() != null && (firstDue == null || t.nextAttemptAt().isBefore(firstDue))) {
                        firstDue = t.nextAttemptAt();
                    }
                    events.publish(t.events(), e.replyTo());
                    for (Alert a : alerts) {
                        if (a.taskId().equals(e.taskId())) {
                            events.alert(a);
                        }
                    }
                } else {
                    log.info("task {} step {}: recovery skipped, the claim changed meanwhile", e.taskId(),
                            e.currentStep());
                }
            }
            recovered += applied;
            if (expired.size() < batch || applied == 0) {
                break;
            }
        }
        purgeIfDue(now);
        if (recovered > 0) {
            log.warn("instance {}: recovered {} expired claim(s) (steps whose runner died, hung or missed its deadline)",
                    instanceId, recovered);
            wakeScheduler.accept(firstDue != null ? firstDue : now);
        }
        return recovered;
    }

    private Transition recover(ExpiredTask e, Instant now, List<Alert> alerts) {
        Workflow<?> wf = registry.find(e.workflow(), e.workflowVersion());
        StepDefinition<?> def = wf != null && e.currentStep() < wf.steps().size() ? wf.steps().get(e.currentStep()) : null;
        int failures = e.failureCount() + 1;
        int threshold = def != null ? def.failureThreshold() : StepBuilder.DEFAULT_FAILURE_THRESHOLD;
        Duration timeout = def != null ? def.completeWithin(e.status() == TaskStatus.COMPENSATING) : StepBuilder.DEFAULT_COMPLETE_WITHIN;
        String stepName = def != null ? def.name() : null;
        boolean compensating = e.status() == TaskStatus.COMPENSATING;
        String message = (compensating ? "compensation of step '" : "step '") + stepName + "' attempt " + e.attempt()
                + " passed its deadline " + e.completeBy() + " on instance " + e.lockedBy() + " (time-out " + failures
                + " of " + threshold + ")";
        List<TaskEvent> evs = new ArrayList<>();
        evs.add(event(e, TaskEvent.Type.STEP_TIMED_OUT, e.currentStep(), stepName, now, message));
        if (failures < threshold) {
            RetryPolicy policy = def != null ? def.retryPolicy(compensating) : RetryPolicy.defaults();
            return new Transition(e.taskId(), e.lease(), e.currentStep(), Transition.Guard.EXPIRED, false,
                    compensating ? TaskStatus.COMPENSATING : TaskStatus.PENDING, false, e.currentStep(), stepName,
                    e.attempt(), failures, timeout, now.plus(policy.backoff(failures)), message, null, evs);
        }
        if (compensating) {
            evs.add(event(e, TaskEvent.Type.COMPENSATION_FAILED, e.currentStep(), stepName, now, message));
            alerts.add(new Alert(e.taskId(), e.businessKey(), e.workflow(), TaskStatus.COMPENSATION_FAILED, stepName,
                    message, now));
            StepUpdate failed = new StepUpdate(e.currentStep(), stepName, null, e.attempt(), null, message, null, now,
                    true, StepStatus.COMPENSATION_FAILED);
            return new Transition(e.taskId(), e.lease(), e.currentStep(), Transition.Guard.EXPIRED, false,
                    TaskStatus.COMPENSATION_FAILED, false, e.currentStep(), stepName, e.attempt(), failures, timeout,
                    null, message, failed, evs);
        }
        StepUpdate failed = new StepUpdate(e.currentStep(), stepName, StepStatus.FAILED, e.attempt(), null, message,
                null, now, false, null);
        evs.add(event(e, TaskEvent.Type.STEP_FAILED, e.currentStep(), stepName, now, message));
        // A step that timed out may have applied its effect: compensate it too.
        int j = wf != null && (wf.compensateOnFailure() || e.cancelRequested())
                ? TaskRun.lastCompensable(wf, e.currentStep()) : -1;
        if (j >= 0) {
            // Ask a scheduler to compensate: release the task as COMPENSATING at the last compensable step.
            evs.add(event(e, TaskEvent.Type.COMPENSATING, -1, null, now, message));
            StepDefinition<?> comp = wf.steps().get(j);
            return new Transition(e.taskId(), e.lease(), e.currentStep(), Transition.Guard.EXPIRED, false, TaskStatus.COMPENSATING,
                    false, j, comp.name(), 0, 0, comp.compensateWithin(), now, message, failed, evs);
        }
        TaskStatus end = e.cancelRequested() ? TaskStatus.CANCELLED : TaskStatus.ERROR;
        evs.add(event(e, end == TaskStatus.CANCELLED ? TaskEvent.Type.CANCELLED : TaskEvent.Type.ERROR, -1, null, now,
                message));
        if (end == TaskStatus.ERROR) {
            alerts.add(new Alert(e.taskId(), e.businessKey(), e.workflow(), TaskStatus.ERROR, stepName, message, now));
        }
        return new Transition(e.taskId(), e.lease(), e.currentStep(), Transition.Guard.EXPIRED, false, end, false, e.currentStep(),
                stepName, e.attempt(), failures, timeout, null, message, failed, evs);
    }

    private static TaskEvent event(ExpiredTask e, TaskEvent.Type type, int step, String stepName, Instant at,
            String message) {
        return new TaskEvent(e.taskId(), e.businessKey(), e.workflow(), type, step, stepName, e.attempt(), at, message);
    }

    private void purgeIfDue(Instant now) {
        if (retention == null || now.isBefore(nextPurge)) {
            return;
        }
        nextPurge = now.plus(PURGE_EVERY);
        Instant cutoff = now.minus(retention);
        int total = 0;
        for (int round = 0; round < 20; round++) {
            int n = store.purge(cutoff, PURGE_BATCH);
            total += n;
            if (n < PURGE_BATCH) {
                break;
            }
        }
        if (total > 0) {
            log.info("purged {} final tasks last updated before {}", total, cutoff);
        }
    }

    /** Gives up the lease (at shutdown), so another instance takes over at once. */
    public synchronized void releaseLease() {
        if (leader) {
            store.releaseSupervisorLease(instanceId);
            leader = false;
        }
    }
}
