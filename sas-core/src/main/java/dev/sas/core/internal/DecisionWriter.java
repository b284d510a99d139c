package dev.sas.core.internal;

import dev.sas.core.Alert;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.internal.TaskStateMachine.CompensationFailed;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.Outcome;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.internal.TaskStateMachine.StepFailed;
import dev.sas.core.internal.TaskStateMachine.UnstorableResultException;
import dev.sas.core.spi.Transition;
import java.time.Clock;
import java.time.Instant;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link AttemptRunner}'s last act for a decision of the {@link TaskStateMachine}: records it
 * through the {@link Recorder}, then acts on the store's answer — goes on in the same claim,
 * releases the task to the {@link ClaimLoop}, decides again for a cancel the transition yielded to,
 * or fails the step when the store refused its result. Thread-safe. Logs under the runner's name.
 */
final class DecisionWriter {
    private static final Logger log = LoggerFactory.getLogger(AttemptRunner.class);

    private final Clock clock;
    private final Recorder recorder;
    private final EventBus events;
    private final Metrics metrics;
    private final ClaimLoop loop;
    private final Consumer<TaskRun> goOn;

    private volatile boolean stopping;

    /** @param goOn runs the task's next step (or compensation) in the same claim */
    DecisionWriter(Clock clock, Recorder recorder, EventBus events, Metrics metrics, ClaimLoop loop,
            Consumer<TaskRun> goOn) {
        this.clock = clock;
        this.recorder = recorder;
        this.events = events;
        this.metrics = metrics;
        this.loop = loop;
        this.goOn = goOn;
    }

    /** From now on, a task whose step finishes is handed back to the store instead of going on here. */
    void stopping() {
        stopping = true;
    }

    /** The task as the state machine reads it. */
    Snapshot snapshot(TaskRun run) {
        return Snapshot.of(run, stopping);
    }

    /**
     * Records the decision, then acts on it: goes on in this claim, or releases the task. When the
     * store reports a cancel the transition yielded to, decides again for the cancel.
     *
     * @param stepCompleted the decision records a step's completion (counted once written)
     */
    void carryOut(TaskRun run, Decision d, boolean stepCompleted) {
        carryOut(run, d, stepCompleted, false);
    }

    /** @param fallback the decision replaces one the store refused: a second refusal is not handled again */
    private void carryOut(TaskRun run, Decision d, boolean stepCompleted, boolean fallback) {
        // the store writes the events to the task's status channel outbox too
        Transition t = d.transition().withStatusChannel(run.statusChannel);
        recorder.write(t, run.completeBy, (result, refusal, at) -> TaskLog.run(run.taskId, run.workflow.name(), run.currentStep, run.attempt, () -> {
            try {
                if (result == Recorder.Result.APPLIED) {
                    applied(run, d, stepCompleted, at);
                } else if (result == Recorder.Result.CANCEL_REQUESTED && d.ifCancelRequested() != null) {
                    run.cancelRequested = true;
                    carryOut(run, TaskStateMachine.decide(snapshot(run), d.ifCancelRequested(), clock.instant()),
                            false, fallback);
                } else if (result == Recorder.Result.REFUSED && !fallback) {
                    Outcome failed = refused(run, t, refusal);
                    log.error("task {} step {}: the store refused to record {} ({}); failing the step instead",
                            run.taskId, run.currentStep, t.status(), refusal);
                    carryOut(run, TaskStateMachine.decide(snapshot(run), failed, clock.instant()), false, true);
                } else {
                    notRecorded(run.taskId, run.currentStep, result, refusal);
                    loop.release();
                }
            } catch (Throwable e) {
                metrics.internalErrors.increment();
                log.error("task {} step {}: internal error after recording; the supervisor will recover it",
                        run.taskId, run.currentStep, e);
                loop.release();
            }
        }));
    }

    /** The store wrote the decision's transition at {@code at}: publish, count, then go on or release. */
    void applied(TaskRun run, Decision d, boolean stepCompleted, Instant at) {
        Transition t = d.transition();
        StepShapes.applied(run, t);
        count(d, stepCompleted, run.workflow);
        events.publish(t.events(), run.statusChannel);
        d.alerts().forEach(a -> events.alert(stamped(a, at)));
        if (t.keepLock()) {
            moveTo(run, t.status(), t.currentStep(), at);
            goOn.accept(run);
            return;
        }
        loop.release();
        if (t.nextAttemptAt() != null) {
            // a retry after its backoff, or a call held back until its endpoint can take it
            loop.scheduleWakeUp(t.nextAttemptAt(), at);
        }
    }

    private void count(Decision d, boolean stepCompleted, Workflow<?> workflow) {
        if (stepCompleted) {
            metrics.stepsCompleted.increment();
        }
        if (d.isRetry()) {
            metrics.retriesScheduled.increment();
        }
        metrics.ended(d.transition().status(), workflow);
    }

    /** The task goes on in this claim at {@code step}: a fresh attempt with its own deadline. */
    private static void moveTo(TaskRun run, TaskStatus status, int step, Instant writtenAt) {
        run.status = status;
        run.currentStep = step;
        run.attempt = 1;
        run.failureCount = 0;
        run.completeBy = writtenAt.plus(run.workflow.steps().get(step).completeWithin(status == TaskStatus.COMPENSATING));
    }

    /** Alerts carry the instant the transition was written, which is when the task got there. */
    static Alert stamped(Alert a, Instant at) {
        return new Alert(a.taskId(), a.businessKey(), a.workflow(), a.status(), a.stepName(), a.message(), at);
    }

    /**
     * The failure that replaces a transition the store refused: the step (or its compensation) ran,
     * so it fails for good, keeping the error the refused transition carried and the store's reason.
     */
    private static Outcome refused(TaskRun run, Transition t, String refusal) {
        String what = run.compensating() ? "compensation of step '" + run.stepName() + "'" : "step '" + run.stepName() + "'";
        String message = "the store refused to record the result of " + what + " (" + refusal + ")"
                + (t.lastError() == null ? "" : "; its error was: " + t.lastError());
        Throwable error = new UnstorableResultException(message);
        Instant startedAt = t.step() != null ? t.step().startedAt() : null;
        return run.compensating() ? new CompensationFailed(error, startedAt) : new StepFailed(error, startedAt);
    }

    /** Logs and counts a transition the store did not write. */
    void notRecorded(Object taskId, int step, Recorder.Result result, String refusal) {
        if (result == Recorder.Result.REFUSED) {
            metrics.internalErrors.increment();
            log.error("task {} step {}: the store refused to record the step's failure too ({}); left to the"
                    + " supervisor", taskId, step, refusal);
        } else if (result == Recorder.Result.NOT_WRITTEN) {
            log.warn("task {} step {}: transition not recorded (store unavailable); the supervisor will recover it",
                    taskId, step);
        } else {
            metrics.staleRejected.increment();
            log.warn("task {} step {}: transition rejected by the store as stale (deadline passed or lease moved on)",
                    taskId, step);
        }
    }
}
