package dev.sas.core.internal;

import static dev.sas.core.internal.TaskStateMachine.CANCELLED_BY_OPERATOR;
import static dev.sas.core.internal.TaskStateMachine.alert;
import static dev.sas.core.internal.TaskStateMachine.compensatingHolder;
import static dev.sas.core.internal.TaskStateMachine.describe;
import static dev.sas.core.internal.TaskStateMachine.event;
import static dev.sas.core.internal.TaskStateMachine.holder;
import static dev.sas.core.internal.TaskStateMachine.retries;

import dev.sas.core.RetryPolicy;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.internal.TaskStateMachine.CancelRequested;
import dev.sas.core.internal.TaskStateMachine.CompensationCompleted;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.Transition;
import java.time.Instant;
import java.util.List;

/**
 * The task state machine's decisions for the outcome of a compensation. Part of
 * {@link TaskStateMachine}: pure, thread-safe.
 */
final class CompensationDecisions {

    private CompensationDecisions() {
    }

    static Decision completed(Snapshot s, CompensationCompleted o, Instant now) {
        int i = s.currentStep();
        StepUpdate undone = StepUpdate.compensated(i, s.step(i).name(), s.attempt(), o.startedAt(), now);
        TaskEvent completed = event(s, TaskEvent.Type.COMPENSATION_COMPLETED, i, s.attempt(), now, null);
        int next = TaskRun.lastCompensable(s.workflow(), i - 1, s.skipped());
        if (next >= 0) {
            Transition.Builder b = compensatingHolder(s, next).failureCount(0).recording(undone);
            Transition t = s.shuttingDown()
                    ? b.attempt(0).events(completed).release(TaskStatus.COMPENSATING, now)
                    : b.attempt(1).events(completed, event(s, TaskEvent.Type.COMPENSATION_STARTED, next, 1, now, null))
                            .keepHolding(TaskStatus.COMPENSATING);
            return new Decision(t, List.of(), null, null);
        }
        TaskStatus end = s.cancelRequested() ? TaskStatus.CANCELLED : TaskStatus.COMPENSATED;
        TaskEvent.Type endEvent = end == TaskStatus.CANCELLED ? TaskEvent.Type.CANCELLED : TaskEvent.Type.COMPENSATED;
        // A cancel accepted while compensating after a failure makes the task end CANCELLED, as promised.
        Transition t = holder(s, i).unlessCancelRequested(!s.cancelRequested()).attempt(s.attempt()).failureCount(0)
                .recording(undone).events(completed, event(s, endEvent, -1, 0, now, null)).end(end);
        CancelRequested ifCancelled = s.cancelRequested() ? null
                : new CancelRequested(i - 1, undone, List.of(completed), CANCELLED_BY_OPERATOR);
        return new Decision(t, List.of(), ifCancelled, null);
    }

    static Decision failed(Snapshot s, Throwable error, Instant startedAt, Instant now) {
        int i = s.currentStep();
        String name = s.step(i).name();
        RetryPolicy policy = s.step(i).retryPolicy(true);
        String message = describe(error);
        if (retries(policy, error, s.attempt())) {
            Instant next = now.plus(policy.backoff(s.attempt()));
            Transition t = compensatingHolder(s, i).attempt(s.attempt()).failureCount(s.failureCount()).lastError(message)
                    .events(event(s, TaskEvent.Type.STEP_RETRYING, i, s.attempt(), now,
                            "compensation failed: " + message))
                    .release(TaskStatus.COMPENSATING, next);
            return new Decision(t, List.of(), null, next);
        }
        Transition t = holder(s, i).attempt(s.attempt()).failureCount(s.failureCount()).lastError(message)
                .recording(StepUpdate.compensationFailed(i, name, s.attempt(), message, startedAt, now))
                .events(event(s, TaskEvent.Type.COMPENSATION_FAILED, i, s.attempt(), now, message))
                .end(TaskStatus.COMPENSATION_FAILED);
        return new Decision(t, List.of(alert(s, TaskStatus.COMPENSATION_FAILED, name, message, now)), null, null);
    }
}
