package dev.sas.core.internal;

import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.internal.TaskStateMachine.TimedOut;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Supervisor role: while it holds the store's supervisor lease, finds claims whose deadline
 * passed (hung steps, dead nodes), counts the time-out, and releases the task for a retry after a
 * backoff, or, once the step is out of time-outs or attempts, fails it (compensating when the
 * workflow says so) and alerts; the {@link TaskStateMachine} decides which. A failure that a
 * cancel requested since the scan would contradict is decided again with the cancel, so the
 * cancel is honoured. Its {@link DeployWatch} parks tasks no live runtime can run and resumes them
 * once one can. Every write is conditional on the
 * expired lease, so two supervisors never recover the same claim twice. {@link Retention} asks it
 * whether this node leads. Knows no business logic.
 *
 * <p>Starvation: the lease is taken for {@code leaseTtl} from the time read before asking the
 * store, and this node acts on it only until a third of the lease before its end ({@link #margin});
 * a pass held up past that (a starved thread, a pause, a slow store) stops before its next write,
 * logs it and counts it ({@code SasMetrics.supervisorPassesStopped}). Another node takes the lease only once it has
 * expired in the store, so two supervisors never act at once as long as the clocks' error and one
 * write stay within the margin (and every write is fenced by the claim's lease regardless).
 */
public final class Supervisor {
    private static final Logger log = LoggerFactory.getLogger(Supervisor.class);

    private final StateStore store;
    private final Registry registry;
    private final DatabaseClock clock;
    private final String instanceId;
    private final EventBus events;
    private final Metrics metrics;
    private final Duration leaseTtl;
    private final int batch;
    private final Consumer<Instant> wakeScheduler;
    private final DeployWatch deployWatch;
    private boolean leader;
    /** Fires the store's recurring schedules on the passes this node leads; null if the store keeps none. */
    private volatile ScheduleFirer schedules;
    /** Delivers ended child tasks to their parents on the passes this node leads; null without child task steps. */
    private volatile ChildWatch children;
    /** Until when this node acts on its lease (a margin before the lease ends); null when it does not lead. */
    private volatile Instant leaseValidUntil;

    /**
     * A supervisor; call {@link #runOnce()} on its interval.
     *
     * @param advertised the workflow versions this runtime claims, advertised to peers on every
     *     pass (empty when its scheduler is off)
     * @param unrunnableGrace how long tasks may be due with no live runtime to claim them before they are parked
     */
    public Supervisor(StateStore store, Registry registry, DatabaseClock clock, String instanceId, EventBus events,
            Metrics metrics, Duration leaseTtl, int batch, Consumer<Instant> wakeScheduler,
            Set<WorkflowVersion> advertised, Duration unrunnableGrace) {
        this.store = store;
        this.registry = registry;
        this.clock = clock;
        this.instanceId = instanceId;
        this.events = events;
        this.metrics = metrics;
        this.leaseTtl = leaseTtl;
        this.batch = batch;
        this.wakeScheduler = wakeScheduler;
        this.deployWatch = new DeployWatch(store.deployments().orElse(null), instanceId, advertised, leaseTtl, unrunnableGrace, batch);
    }

    /**
     * One pass: take or renew the lease, recover every expired claim.
     *
     * @return how many claims were recovered
     */
    public synchronized int runOnce() {
        clock.ensureFresh();
        Instant now = clock.instant();
        deployWatch.advertise(now);
        if (!store.tryAcquireSupervisorLease(instanceId, now, leaseTtl)) {
            leaseValidUntil = null;
            if (leader) {
                log.info("instance {} is no longer the active supervisor", instanceId);
                leader = false;
            }
            relayChildren(false);
            return 0;
        }
        leaseValidUntil = now.plus(leaseTtl).minus(margin(leaseTtl));
        if (!leader) {
            log.info("instance {} is now the active supervisor", instanceId);
            leader = true;
        }
        int recovered = 0;
        Instant firstDue = null;
        while (true) {
            if (!stillLeads("scanning for expired claims")) {
                return recovered;
            }
            List<ExpiredTask> expired = store.findExpired(now, batch);
            if (expired.isEmpty()) {
                break;
            }
            if (!stillLeads("recovering " + expired.size() + " expired claim(s)")) {
                return recovered;
            }
            List<Decision> decisions = new ArrayList<>(expired.size());
            for (ExpiredTask e : expired) {
                decisions.add(TaskStateMachine.decide(snapshot(e), new TimedOut(e.lockedBy(), e.completeBy()), now));
            }
            List<WriteOutcome> outcomes = write(decisions, expired, now);
            // A cancel requested after the scan stopped a write that would have ignored it: decide
            // again with the cancel known, so it is honoured rather than recorded and dropped.
            List<Integer> cancelled = new ArrayList<>();
            for (int i = 0; i < outcomes.size(); i++) {
                if (outcomes.get(i) == WriteOutcome.CANCEL_REQUESTED) {
                    cancelled.add(i);
                }
            }
            if (!cancelled.isEmpty() && stillLeads("honouring cancels")) {
                List<Decision> again = new ArrayList<>(cancelled.size());
                for (int i : cancelled) {
                    ExpiredTask e = expired.get(i);
                    TaskLog.run(e.taskId(), e.workflow(), e.currentStep(), e.attempt(), () -> log.info(
                            "task {} step {}: cancel requested while its expired claim was being recovered; honouring it",
                            e.taskId(), e.currentStep()));
                    again.add(TaskStateMachine.decide(snapshot(e).withCancelRequested(),
                            decisions.get(i).ifCancelRequested(), now));
                }
                List<WriteOutcome> againOutcomes = write(again, cancelled.stream().map(expired::get).toList(), now);
                for (int k = 0; k < cancelled.size(); k++) {
                    decisions.set(cancelled.get(k), again.get(k));
                    outcomes.set(cancelled.get(k), againOutcomes.get(k));
                }
            }
            int applied = 0;
            for (int i = 0; i < outcomes.size(); i++) {
                Decision d = decisions.get(i);
                Transition t = d.transition();
                ExpiredTask e = expired.get(i);
                if (outcomes.get(i).isApplied()) {
                    applied++;
                    metrics.timeoutsRecovered.increment();
                    metrics.ended(t.status(), registry.find(e.workflow(), e.workflowVersion()));
                    TaskLog.run(e.taskId(), e.workflow(), e.currentStep(), e.attempt(), () -> log.info(
                            "task {} step {}: claim by {} expired at {}; now {}", e.taskId(), e.currentStep(),
                            e.lockedBy(), e.completeBy(), t.status()));
                    if (t.nextAttemptAt() != null && (firstDue == null || t.nextAttemptAt().isBefore(firstDue))) {
                        firstDue = t.nextAttemptAt();
                    }
                    events.publish(t.events(), e.statusChannel());
                    d.alerts().forEach(events::alert);
                } else if (outcomes.get(i) == WriteOutcome.BUSY) {
                    log.info("task {} step {}: recovery deferred to the next pass, its row is held by another"
                            + " transaction (a node frozen or cut off in the middle of a write)", e.taskId(),
                            e.currentStep());
                } else {
                    TaskLog.run(e.taskId(), e.workflow(), e.currentStep(), e.attempt(), () -> log.info(
                            "task {} step {}: recovery skipped, the claim changed meanwhile", e.taskId(),
                            e.currentStep()));
                }
            }
            recovered += applied;
            if (expired.size() < batch || applied == 0) {
                break;
            }
        }
        if (!stillLeads("checking for unrunnable tasks")) {
            return recovered;
        }
        DeployWatch.Check check = deployWatch.checkIfDue(now);
        for (RecordedEvent e : check.parked()) {
            events.publish(List.of(e.event()), e.statusChannel());
        }
        for (RecordedEvent e : check.unparked()) {
            events.publish(List.of(e.event()), e.statusChannel());
        }
        if (!check.unparked().isEmpty()) {
            wakeScheduler.accept(now);
        }
        fireSchedules();
        if (stillLeads("delivering ended child tasks")) {
            relayChildren(true);
        }
        if (recovered > 0) {
            log.warn("instance {}: recovered {} expired claim(s) (steps whose runner died, hung or missed its deadline)",
                    instanceId, recovered);
            wakeScheduler.accept(firstDue != null ? firstDue : now);
        }
        return recovered;
    }

    /** Fires the store's recurring schedules on every pass this node leads, after recovering claims. */
    public void fireSchedulesWith(ScheduleFirer firer) {
        this.schedules = firer;
    }

    /** Delivers ended child tasks to their parents on every pass, leading or not (see {@link #relayChildren}). */
    public void relayChildrenWith(ChildWatch watch) {
        this.children = watch;
    }

    /**
     * Completes the parent steps whose child task ended. Every node that runs parent workflows does
     * it on its passes, leading or not (the leader may not know those workflows); every delivery is
     * fenced by the parent's step and lease, so two nodes delivering the same end apply it once. A
     * failure is logged and retried on the next pass.
     */
    private void relayChildren(boolean leading) {
        ChildWatch watch = children;
        if (watch == null) {
            return;
        }
        try {
            int delivered = watch.deliverEnded();
            if (delivered > 0) {
                wakeScheduler.accept(clock.instant());
            }
        } catch (RuntimeException e) {
            metrics.storeFailure();
            log.warn("instance {}: delivering ended child tasks failed ({}); trying again on the next pass{}", instanceId,
                    e.toString(), leading ? "" : " (not leading)");
        }
    }

    /**
     * Submits the due fire times of the store's schedules, if this node still leads. Exactly once per
     * fire time does not rest on the lease (see {@link ScheduleFirer}); leading keeps it to one node
     * at a time. A failure is logged and retried on the next pass, never fails the pass.
     */
    private void fireSchedules() {
        ScheduleFirer firer = schedules;
        if (firer == null || !stillLeads("firing schedules")) {
            return;
        }
        try {
            firer.fireDue(clock.instant());
        } catch (RuntimeException e) {
            metrics.storeFailure();
            log.warn("instance {}: firing recurring schedules failed ({}); trying again on the next pass", instanceId,
                    e.toString());
        }
    }

    /**
     * How long before its lease ends a supervisor stops acting: a third of the lease (one
     * supervisor interval), for the error between nodes' reading of the database's clock and the
     * time one write takes.
     */
    static Duration margin(Duration leaseTtl) {
        return leaseTtl.dividedBy(3);
    }

    /**
     * True while this node may still act on its lease, read now (not at the start of the pass);
     * otherwise the pass was held up past the lease's margin: it stops, logs and counts it.
     */
    private boolean stillLeads(String doing) {
        Instant until = leaseValidUntil;
        Instant now = clock.instant();
        if (until == null) {
            return false; // stopped already in this pass
        }
        if (now.isBefore(until)) {
            return true;
        }
        metrics.supervisorPassesStopped.increment();
        leaseValidUntil = null;
        leader = false;
        log.warn("instance {}: supervisor pass held up until {}, past its lease's margin {}; stopped before {},"
                + " another instance may lead now", instanceId, now, until, doing);
        return false;
    }


    /** The expired claim as the state machine sees it; the workflow is null when this runtime lacks it. */
    private Snapshot snapshot(ExpiredTask e) {
        return Snapshot.of(e, registry.find(e.workflow(), e.workflowVersion()));
    }

    /** Writes the decisions' transitions in one call; alerts wait until the caller sees them applied. */
    private List<WriteOutcome> write(List<Decision> decisions, List<ExpiredTask> expired, Instant now) {
        List<Transition> transitions = new ArrayList<>(decisions.size());
        for (int i = 0; i < decisions.size(); i++) {
            // the store writes the events to the task's status channel outbox too
            transitions.add(decisions.get(i).transition().withStatusChannel(expired.get(i).statusChannel()));
        }
        return new ArrayList<>(store.write(transitions, now));
    }

    /**
     * Renews this runtime's advertisement of the workflow versions it claims, without taking part
     * in the supervisor election: a runtime whose supervisor is disabled calls it on the supervisor
     * interval, or the active supervisor would park the tasks only it can run.
     */
    public synchronized void advertise() {
        clock.ensureFresh();
        deployWatch.advertise(clock.instant());
        relayChildren(false);
    }

    /**
     * Whether this node held the supervisor lease at its last pass and that lease, less its
     * margin, has not run out since. Does not wait for a pass in progress.
     */
    public boolean isLeader() {
        Instant until = leaseValidUntil;
        return until != null && clock.instant().isBefore(until);
    }

    /**
     * Gives up the lease (at shutdown), so another instance takes over at once, and withdraws this
     * runtime's advertised workflow versions.
     */
    public synchronized void releaseLease() {
        if (leader) {
            leaseValidUntil = null;
            store.releaseSupervisorLease(instanceId);
            leader = false;
        }
        deployWatch.withdraw(clock.instant());
    }
}
