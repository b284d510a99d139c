package dev.sas.core.internal;

import static dev.sas.core.internal.TaskStateMachine.CANCELLED_BY_OPERATOR;
import static dev.sas.core.internal.TaskStateMachine.compensatingHolder;
import static dev.sas.core.internal.TaskStateMachine.decide;
import static dev.sas.core.internal.TaskStateMachine.event;
import static dev.sas.core.internal.TaskStateMachine.holder;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.internal.TaskStateMachine.CancelRequested;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.HeldBack;
import dev.sas.core.internal.TaskStateMachine.CompletionReceived;
import dev.sas.core.internal.TaskStateMachine.Outcome;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.internal.TaskStateMachine.StepCompleted;
import dev.sas.core.spi.StorableText;
import dev.sas.core.spi.Transition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The task state machine's decisions for a task that waits: held back by its agent's flow control,
 * awaiting a reply, or receiving one. Part of {@link TaskStateMachine}: pure, thread-safe.
 */
final class WaitDecisions {

    private WaitDecisions() {
    }

    /**
     * The outcome decided instead when a reply's transition yields to a cancel: {@code inner},
     * with the reply's COMPLETION_RECEIVED event kept first.
     */
    record CompletionLead(Outcome inner, TaskEvent received) implements Outcome {
    }

    /** The error a reply reported ({@code SasClient.failStep}); the step's retry policy decides. */
    static final class FailedReply extends RuntimeException {
        private static final long serialVersionUID = 1L;

        FailedReply(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Releases a task whose agent call was held back, due again at {@code retryAt}: a step waits in
     * WAITING, a compensation stays COMPENSATING. The claim's attempt is given back (the call was not
     * made, or its failure is the endpoint's, which the breaker now stands for) and the time-outs are
     * kept, so waiting spends no retry budget. A step's release yields to a cancel, which is then
     * carried out in this claim.
     */
    static Decision heldBack(Snapshot s, HeldBack o, Instant now) {
        int i = s.currentStep();
        int attempts = Math.max(0, s.attempt() - 1);
        String reason = StorableText.replaceUnstorable(o.reason());
        TaskEvent waiting = event(s, TaskEvent.Type.WAITING, i, s.attempt(), now, reason);
        if (s.compensating()) {
            Transition t = compensatingHolder(s, i).attempt(attempts).failureCount(s.failureCount()).lastError(reason)
                    .events(waiting).release(TaskStatus.COMPENSATING, o.retryAt());
            return new Decision(t, List.of(), null, null);
        }
        Transition t = holder(s, i).unlessCancelRequested(!s.cancelRequested()).attempt(attempts)
                .failureCount(s.failureCount()).lastError(reason).events(waiting)
                .release(TaskStatus.WAITING, o.retryAt());
        // as at a claim: earlier attempts at this step may have applied its effect
        CancelRequested ifCancelled = s.cancelRequested() ? null
                : new CancelRequested(attempts >= 1 ? i : i - 1, null, List.of(), CANCELLED_BY_OPERATOR);
        return new Decision(t, List.of(), ifCancelled, null);
    }

    /**
     * The request of an awaiting step was sent: the task awaits its reply, no longer held by this
     * scheduler; attempts, time-outs, lease and deadline are kept. Yields to a cancel, which then
     * compensates the step too (its request went out).
     */
    static Decision requestSent(Snapshot s, Instant now) {
        int i = s.currentStep();
        // the request went out just now: whoever got it may apply it until the attempt's deadline
        CancelRequested cancel = new CancelRequested(i, null, List.of(), CANCELLED_BY_OPERATOR,
                InDoubt.sendsRequest(s.step(i)) ? InDoubt.sentAt(s.step(i), now) : null);
        if (s.cancelRequested()) {
            return decide(s, cancel, now);
        }
        Transition t = holder(s, i).unlessCancelRequested().attempt(s.attempt()).failureCount(s.failureCount())
                .events(event(s, TaskEvent.Type.COMPLETION_AWAITED, i, s.attempt(), now, null)).awaitCompletion();
        return new Decision(t, List.of(), cancel, null);
    }

    /** A reply decides like the step's own result would, recorded with a COMPLETION_RECEIVED event first. */
    static Decision completionReceived(Snapshot s, CompletionReceived o, Instant now) {
        Decision d = decide(s, o.result(), now);
        String what = o.result() instanceof StepCompleted ? "completed" : "failed";
        TaskEvent received = event(s, TaskEvent.Type.COMPLETION_RECEIVED, s.currentStep(), s.attempt(), now, what);
        return new Decision(withLeadingEvent(d.transition(), received), d.alerts(),
                d.ifCancelRequested() == null ? null : new CompletionLead(d.ifCancelRequested(), received), d.retryAt());
    }

    static Transition withLeadingEvent(Transition t, TaskEvent first) {
        List<TaskEvent> events = new ArrayList<>(t.events().size() + 1);
        events.add(first);
        events.addAll(t.events());
        return new Transition(t.taskId(), t.lease(), t.fromStatus(), t.fromStep(), t.guard(),
                t.unlessCancelRequested(), t.status(), t.keepLock(), t.currentStep(), t.currentStepName(), t.attempt(),
                t.failureCount(), t.stepTimeout(), t.nextAttemptAt(), t.lastError(), t.step(), events, t.id(),
                t.statusChannel());
    }
}
