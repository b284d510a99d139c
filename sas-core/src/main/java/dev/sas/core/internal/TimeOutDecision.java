package dev.sas.core.internal;

import static dev.sas.core.internal.TaskStateMachine.alert;

import dev.sas.core.Alert;
import dev.sas.core.RetryPolicy;
import dev.sas.core.StepBuilder;
import dev.sas.core.StepDefinition;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.internal.TaskStateMachine.TimedOut;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The task state machine's decision for a step whose deadline passed (the supervisor's outcome,
 * {@link TaskStateMachine.TimedOut}). Part of {@link TaskStateMachine}: pure, thread-safe.
 */
final class TimeOutDecision {

    private TimeOutDecision() {
    }

    /**
     * Counts the time-out. While the step has time-outs ({@code maxTimeouts}) and attempts
     * ({@code RetryPolicy.maxAttempts}, which counts every attempt however it ended) left, the
     * task is released for a retry after a backoff; otherwise it fails (compensating when the
     * workflow says so or a cancel is pending). A failure that would leave the task in ERROR
     * yields to a cancel requested since the scan, and is decided again with it. The workflow may
     * be unknown here: the default {@code maxTimeouts} applies and the attempts are not limited.
     */
    static Decision decide(Snapshot s, TimedOut o, Instant now) {
        Workflow<?> wf = s.workflow();
        int i = s.currentStep();
        StepDefinition<?> def = wf != null && i < wf.steps().size() ? wf.steps().get(i) : null;
        boolean compensating = s.compensating();
        int failures = s.failureCount() + 1;
        int maxTimeouts = def != null ? def.maxTimeouts() : StepBuilder.DEFAULT_MAX_TIMEOUTS;
        RetryPolicy policy = def != null ? def.retryPolicy(compensating) : RetryPolicy.defaults();
        Duration timeout = def != null ? def.completeWithin(compensating) : StepBuilder.DEFAULT_COMPLETE_WITHIN;
        String name = def != null ? def.name() : null;
        String message = (compensating ? "compensation of step '" : "step '") + name + "' attempt " + s.attempt()
                + (s.status() == TaskStatus.AWAITING_COMPLETION ? " got no reply by its deadline " + o.completeBy()
                        : " passed its deadline " + o.completeBy() + " on instance " + o.lockedBy()) + " (time-out " + failures
                + " of " + maxTimeouts + (def != null ? ", attempt " + s.attempt() + " of " + policy.maxAttempts() : "")
                + ")";
        List<TaskEvent> evs = new ArrayList<>();
        evs.add(expiredEvent(s, TaskEvent.Type.STEP_TIMED_OUT, i, name, now, message));
        Transition.Builder b = Transition.expired(s.taskId(), s.lease(), s.status(), i).lastError(message);
        boolean attemptsLeft = def == null || s.attempt() < policy.maxAttempts();
        if (failures < maxTimeouts && attemptsLeft) {
            Instant next = now.plus(policy.backoff(failures));
            Transition t = b.at(i, name, timeout).attempt(s.attempt()).failureCount(failures).events(evs)
                    .release(compensating ? TaskStatus.COMPENSATING : TaskStatus.PENDING, next);
            return new Decision(t, List.of(), null, next);
        }
        if (compensating) {
            evs.add(expiredEvent(s, TaskEvent.Type.COMPENSATION_FAILED, i, name, now, message));
            Transition t = b.at(i, name, timeout).attempt(s.attempt()).failureCount(failures)
                    .recording(StepUpdate.compensationFailed(i, name, s.attempt(), message, null, now)).events(evs)
                    .end(TaskStatus.COMPENSATION_FAILED);
            return new Decision(t, List.of(alert(s, TaskStatus.COMPENSATION_FAILED, name, message, now)), null, null);
        }
        if (wf == null && s.cancelRequested()) {
            // Only a node with the definition can compensate: hand the cancel to the next one that claims it.
            Transition t = b.at(i, name, timeout).attempt(s.attempt()).failureCount(failures).events(evs)
                    .release(TaskStatus.PENDING, now);
            return new Decision(t, List.of(), null, null);
        }
        StepUpdate failed = StepUpdate.failed(i, name, s.attempt(), message, null, now);
        evs.add(expiredEvent(s, TaskEvent.Type.STEP_FAILED, i, name, now, message));
        // A step that timed out may have applied its effect: compensate it too.
        int j = wf != null && (wf.compensateOnFailure() || s.cancelRequested()) ? TaskRun.lastCompensable(wf, i, s.skipped()) : -1;
        if (j >= 0) {
            // A scheduler compensates: the task is released as COMPENSATING at the last compensable step.
            evs.add(expiredEvent(s, TaskEvent.Type.COMPENSATING, -1, null, now, message));
            StepDefinition<?> comp = wf.steps().get(j);
            // a request sent just before its deadline may still be applied for the grace after it
            Instant until = j == i && InDoubt.sendsRequest(comp) ? InDoubt.pending(o.completeBy().plus(InDoubt.GRACE), now) : null;
            Transition t = b.at(j, comp.name(), comp.compensateWithin()).attempt(0).failureCount(0).recording(failed)
                    .events(evs).release(TaskStatus.COMPENSATING, until == null ? now : until);
            return new Decision(t, List.of(), null, null);
        }
        TaskStatus end = s.cancelRequested() ? TaskStatus.CANCELLED : TaskStatus.ERROR;
        evs.add(expiredEvent(s, end == TaskStatus.CANCELLED ? TaskEvent.Type.CANCELLED : TaskEvent.Type.ERROR, -1,
                null, now, message));
        // ERROR yields to a cancel requested after the scan read the task (the cancel is then honoured).
        Transition t = b.unlessCancelRequested(!s.cancelRequested()).at(i, name, timeout).attempt(s.attempt())
                .failureCount(failures).recording(failed).events(evs).end(end);
        // a branch or fan-out element raises no alert of its own: its parent's step fails for it
        List<Alert> alerts = end == TaskStatus.ERROR && (wf == null || !wf.isGroupUnit())
                ? List.of(alert(s, TaskStatus.ERROR, name, message, now)) : List.of();
        return new Decision(t, alerts, s.cancelRequested() ? null : o, null);
    }

    /** The supervisor's events all carry the attempt that timed out. */
    private static TaskEvent expiredEvent(Snapshot s, TaskEvent.Type type, int step, String stepName, Instant at,
            String message) {
        return new TaskEvent(s.taskId(), s.businessKey(), s.workflowName(), type, step, stepName, s.attempt(), at,
                message);
    }
}
