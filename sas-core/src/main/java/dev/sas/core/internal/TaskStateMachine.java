package dev.sas.core.internal;

import dev.sas.core.Alert;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.StepDefinition;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.StorableText;
import dev.sas.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The one place that decides what becomes of a task: given what the task looked like, its
 * workflow and what just happened, it returns the transition to write, the alerts to raise once
 * it is written, and what to decide instead if the store reports that an operator asked to cancel.
 * The Scheduler and the Supervisor only gather the facts and carry the decision out. Its parts:
 * {@link CompensationDecisions}, {@link WaitDecisions}, {@link TimeOutDecision}; the decisions a
 * store carries out on its own are {@code dev.sas.core.spi.TaskDecisions}.
 *
 * <p>Pure: it reads no clock (time comes in as {@code now}), touches no store and keeps no state;
 * the only randomness is the retry policy's jitter. Thread-safe.
 */
final class TaskStateMachine {
    /** Deadline recorded for a task whose step this runtime cannot look up (it is parked, not run). */
    static final Duration UNKNOWN_STEP_TIMEOUT = Duration.ofSeconds(30);
    static final String CANCELLED_BY_OPERATOR = "cancelled by an operator";
    /** Longest error message recorded on a task, in chars. */
    static final int MAX_ERROR_LENGTH = 2000;

    private TaskStateMachine() {
    }

    /**
     * What is known of the task when deciding.
     *
     * @param workflow its definition, or null when this runtime has none
     * @param shuttingDown the scheduler is stopping: hand the task back instead of running its next step here
     */
    record Snapshot(TaskId taskId, String businessKey, String workflowName, Workflow<?> workflow, long lease,
            TaskStatus status, int currentStep, int attempt, int failureCount, boolean cancelRequested,
            boolean shuttingDown, Set<Integer> skipped) {

        /** @param skipped the steps recorded SKIPPED (never compensated); empty where unknown */
        Snapshot {
            Objects.requireNonNull(taskId, "taskId must not be null");
            Objects.requireNonNull(status, "status must not be null");
            skipped = skipped.isEmpty() ? Set.of() : Set.copyOf(skipped); // per decision: no copy of nothing
        }

        /**
         * A task that awaits a reply, as the store read it when the reply arrived; nobody holds it,
         * so a decision never goes on in a claim ({@code shuttingDown}).
         */
        static Snapshot of(dev.sas.core.spi.CompletionTarget r, Workflow<?> workflow) {
            return new Snapshot(r.taskId(), r.businessKey(), r.workflow(), workflow, r.lease(), r.status(),
                    r.currentStep(), r.attempt(), r.failureCount(), r.cancelRequested(), true, Set.of());
        }

        /** A task held by this scheduler. */
        static Snapshot of(TaskRun run, boolean shuttingDown) {
            return new Snapshot(run.taskId, run.businessKey, run.workflow.name(), run.workflow, run.lease, run.status,
                    run.currentStep, run.attempt, run.failureCount, run.cancelRequested, shuttingDown, run.skipped);
        }

        /** An expired claim as the supervisor's scan saw it; {@code workflow} may be null. */
        static Snapshot of(ExpiredTask e, Workflow<?> workflow) {
            return new Snapshot(e.taskId(), e.businessKey(), e.workflow(), workflow, e.lease(), e.status(),
                    e.currentStep(), e.attempt(), e.failureCount(), e.cancelRequested(), false, Set.of());
        }

        boolean compensating() {
            return status == TaskStatus.COMPENSATING;
        }

        /** The same task, now known to have a cancel requested. */
        Snapshot withCancelRequested() {
            return new Snapshot(taskId, businessKey, workflowName, workflow, lease, status, currentStep, attempt,
                    failureCount, true, shuttingDown, skipped);
        }

        StepDefinition<?> step(int index) {
            return workflow.steps().get(index);
        }
    }

    /** What happened to the task (here, and the step shapes' outcomes in {@link ShapeDecisions}). */
    interface Outcome {
    }

    /** The current step returned {@code output} (an attempt that began at {@code startedAt}). */
    record StepCompleted(String output, Instant startedAt) implements Outcome {
    }

    /** An attempt at the current step failed; the step's retry policy says whether it is retried. */
    record StepFailed(Throwable error, Instant startedAt) implements Outcome {
        StepFailed {
            Objects.requireNonNull(error, "error must not be null");
        }
    }

    /** The current step's compensation ran. */
    record CompensationCompleted(Instant startedAt) implements Outcome {
    }

    /** An attempt at the current step's compensation failed; the step's retry policy says whether it is retried. */
    record CompensationFailed(Throwable error, Instant startedAt) implements Outcome {
        CompensationFailed {
            Objects.requireNonNull(error, "error must not be null");
        }
    }

    /** The supervisor found the claim of {@code lockedBy} expired at {@code completeBy}. */
    record TimedOut(String lockedBy, Instant completeBy) implements Outcome {
    }

    /**
     * An operator asked to cancel: compensate steps up to {@code compensateFrom}, writing {@code step}
     * and the {@code lead} events first.
     *
     * @param step step row to write, or null
     * @param lead events that come before the cancellation's own
     * @param inDoubtUntil until when a request of step {@code compensateFrom} may still be applied, or null
     */
    record CancelRequested(int compensateFrom, StepUpdate step, List<TaskEvent> lead, String reason,
            Instant inDoubtUntil) implements Outcome {
        CancelRequested {
            lead = List.copyOf(lead);
        }

        CancelRequested(int compensateFrom, StepUpdate step, List<TaskEvent> lead, String reason) {
            this(compensateFrom, step, lead, reason, null);
        }

        /**
         * A cancel found at claim time. Earlier attempts at the current step (attempt > 1) may have
         * applied its effect, so it is compensated too. A task released for a retry or after a
         * time-out keeps those attempts; one cancelled in ERROR keeps only the attempts whose
         * effect may have applied (none after a definite failure, see {@code abort}). {@code inDoubtUntil}: when
         * the request an earlier attempt sent may no longer be applied, or null.
         */
        static CancelRequested atClaim(Snapshot s, Instant inDoubtUntil) {
            boolean earlier = s.attempt() > 1;
            return new CancelRequested(earlier ? s.currentStep() : s.currentStep() - 1, null, List.of(),
                    CANCELLED_BY_OPERATOR, earlier ? inDoubtUntil : null);
        }
    }

    /** This runtime cannot run the task (no definition, a step past the end, undecodable input): park it. */
    record NotRunnable(String reason) implements Outcome {
    }

    /**
     * The agent's flow control held the current step's (or compensation's) call back: no endpoint
     * had capacity, its rate limit was reached, or its circuit breaker was open (or opened with this
     * call's failure, or this call was a probe that failed). The attempt is not spent.
     *
     * @param reason why, and until when (recorded as the task's last error)
     * @param retryAt when the call should be tried again
     */
    record HeldBack(String reason, Instant retryAt) implements Outcome {
        HeldBack {
            Objects.requireNonNull(reason, "reason must not be null");
            Objects.requireNonNull(retryAt, "retryAt must not be null");
        }
    }

    /** The current step's request was sent: the task awaits its completion, released, lease and deadline kept. */
    record RequestSent() implements Outcome {
    }

    /**
     * A reply to the current step's request arrived and says {@code result} (a {@link StepCompleted}
     * or a {@link StepFailed}): decided as that, with a {@link TaskEvent.Type#COMPLETION_RECEIVED} event first.
     */
    record CompletionReceived(Outcome result) implements Outcome {
        CompletionReceived {
            if (!(result instanceof StepCompleted) && !(result instanceof StepFailed)) {
                throw new IllegalArgumentException("a reply completes or fails the step, was " + result);
            }
        }

        /** What {@code reply} says, for an attempt that began at {@code startedAt}. */
        static CompletionReceived of(dev.sas.core.spi.StepCompletion reply, Instant startedAt) {
            return new CompletionReceived(switch (reply.kind()) {
                case COMPLETED -> new StepCompleted(reply.payload(), startedAt);
                case FAILED -> new StepFailed(new WaitDecisions.FailedReply(reply.payload()),
                        startedAt);
                case FAILED_FOR_GOOD -> new StepFailed(new NonRetryableException(String.valueOf(reply.payload())),
                        startedAt);
            });
        }
    }

    /**
     * What to do.
     *
     * @param transition what to write
     * @param alerts to raise once it is written (stamped with the decision's {@code now})
     * @param ifCancelRequested the outcome to decide instead, on the snapshot
     *     {@linkplain Snapshot#withCancelRequested() with the cancel}, when the store answers
     *     CANCEL_REQUESTED; null exactly when the transition does not yield to a cancel
     * @param retryAt for a retry released with a backoff, when it comes due; else null
     */
    record Decision(Transition transition, List<Alert> alerts, Outcome ifCancelRequested, Instant retryAt) {
        Decision {
            alerts = List.copyOf(alerts);
        }

        /** True when the transition releases a failed attempt for a later retry. */
        boolean isRetry() {
            return retryAt != null;
        }
    }

    /**
     * Decides what becomes of the task.
     *
     * @throws NullPointerException if an argument is null
     */
    static Decision decide(Snapshot s, Outcome outcome, Instant now) {
        Objects.requireNonNull(s, "snapshot must not be null");
        Objects.requireNonNull(now, "now must not be null");
        if (outcome instanceof StepCompleted o) {
            return stepCompleted(s, o, now);
        } else if (outcome instanceof StepFailed o) {
            return stepFailed(s, o.error(), o.startedAt(), now);
        } else if (outcome instanceof CompensationCompleted o) {
            return CompensationDecisions.completed(s, o, now);
        } else if (outcome instanceof CompensationFailed o) {
            return CompensationDecisions.failed(s, o.error(), o.startedAt(), now);
        } else if (outcome instanceof TimedOut o) {
            return TimeOutDecision.decide(s, o, now);
        } else if (outcome instanceof CancelRequested o) {
            return abort(s, o.compensateFrom(), o.step(), o.lead(), o.reason(), true, o.inDoubtUntil(), now);
        } else if (outcome instanceof NotRunnable o) {
            return park(s, o.reason(), now);
        } else if (outcome instanceof HeldBack o) {
            return WaitDecisions.heldBack(s, o, now);
        } else if (outcome instanceof RequestSent) {
            return WaitDecisions.requestSent(s, now);
        } else if (outcome instanceof CompletionReceived o) {
            return WaitDecisions.completionReceived(s, o, now);
        } else if (outcome instanceof ShapeDecisions.Shape o) {
            return ShapeDecisions.decide(s, o, now);
        } else if (outcome instanceof WaitDecisions.CompletionLead o) {
            Decision d = decide(s, o.inner(), now);
            return new Decision(WaitDecisions.withLeadingEvent(d.transition(), o.received()), d.alerts(), d.ifCancelRequested(),
                    d.retryAt());
        }
        throw new NullPointerException("outcome must not be null");
    }

    // ------------------------------------------------------------------ scheduler outcomes

    private static Decision stepCompleted(Snapshot s, StepCompleted o, Instant now) {
        int i = s.currentStep();
        StepUpdate done = StepUpdate.completed(i, s.step(i).name(), s.attempt(), o.output(), o.startedAt(), now);
        return advance(s, done, event(s, TaskEvent.Type.STEP_COMPLETED, i, s.attempt(), now, null), i, now);
    }

    /**
     * The current step is done ({@code done}, announced by {@code doneEvent}): the task goes on to
     * the next step in this claim, or ends PROCESSED; a cancel compensates steps up to {@code compensateFrom}.
     */
    static Decision advance(Snapshot s, StepUpdate done, TaskEvent doneEvent, int compensateFrom, Instant now) {
        int i = s.currentStep();
        CancelRequested cancel = new CancelRequested(compensateFrom, done, List.of(doneEvent), CANCELLED_BY_OPERATOR);
        if (i + 1 >= s.workflow().steps().size()) {
            // A cancel accepted while the last step ran is honoured: the step finished, so it is compensated.
            if (s.cancelRequested()) {
                return decide(s, cancel, now);
            }
            Transition t = holder(s, i).unlessCancelRequested().attempt(s.attempt()).failureCount(s.failureCount())
                    .recording(done).events(doneEvent, event(s, TaskEvent.Type.PROCESSED, -1, 0, now, null))
                    .end(TaskStatus.PROCESSED);
            return new Decision(t, List.of(), cancel, null);
        }
        int next = i + 1;
        Transition.Builder b = holder(s, next).unlessCancelRequested(!s.cancelRequested()).recording(done);
        // Stopping: the next step runs on whichever instance claims the task next.
        Transition t = s.shuttingDown()
                ? b.attempt(0).failureCount(0).events(doneEvent).release(TaskStatus.PENDING, now)
                : b.attempt(1).failureCount(0)
                        .events(doneEvent, event(s, TaskEvent.Type.STEP_STARTED, next, 1, now, null))
                        .keepHolding(TaskStatus.PROCESSING);
        return new Decision(t, List.of(), s.cancelRequested() ? null : cancel, null);
    }

    private static Decision stepFailed(Snapshot s, Throwable error, Instant startedAt, Instant now) {
        int i = s.currentStep();
        String name = s.step(i).name();
        RetryPolicy policy = s.step(i).retryPolicy();
        String message = describe(error);
        // a request whose send failed may still be queued (a reply's failure is the party's answer)
        Instant doubt = InDoubt.failedSend(s.step(i), startedAt, error instanceof WaitDecisions.FailedReply);
        if (retries(policy, error, s.attempt())) {
            Instant next = now.plus(policy.backoff(s.attempt()));
            StepUpdate failed = StepUpdate.retrying(i, name, s.attempt(), message, startedAt, now);
            Transition t = holder(s, i).unlessCancelRequested(!s.cancelRequested()).attempt(s.attempt())
                    .failureCount(s.failureCount()).lastError(message).recording(failed)
                    .events(event(s, TaskEvent.Type.STEP_RETRYING, i, s.attempt(), now, message))
                    .release(TaskStatus.PENDING, next);
            // The failed attempt may have applied its effect before failing: compensate it too.
            CancelRequested ifCancelled = s.cancelRequested() ? null
                    : new CancelRequested(i, failed, List.of(), message, doubt);
            return new Decision(t, List.of(), ifCancelled, next);
        }
        StepUpdate failed = StepUpdate.failed(i, name, s.attempt(), message, startedAt, now);
        List<TaskEvent> lead = List.of(event(s, TaskEvent.Type.STEP_FAILED, i, s.attempt(), now, message));
        int from = mayHaveApplied(policy, error) || s.step(i).runsUnits() ? i : i - 1;
        return abort(s, from, failed, lead, message, s.cancelRequested(), doubt, now);
    }

    /**
     * Fails or cancels the task: compensates completed steps up to {@code from} (continuing in this
     * claim), or, with nothing to compensate, ends it CANCELLED or in ERROR. If step {@code from} may
     * still be applied until {@code inDoubtUntil} ({@link InDoubt}; null: it may not), the task is
     * released COMPENSATING, due then, so that its compensation comes after a late effect.
     */
    static Decision abort(Snapshot s, int from, StepUpdate step, List<TaskEvent> lead, String reason,
            boolean forCancel, Instant inDoubtUntil, Instant now) {
        Workflow<?> wf = s.workflow();
        int j = forCancel || wf.compensateOnFailure() ? TaskRun.lastCompensable(wf, from, s.skipped()) : -1;
        CancelRequested ifCancelled = forCancel ? null : new CancelRequested(from, step, lead, reason, inDoubtUntil);
        List<TaskEvent> evs = new ArrayList<>(lead);
        Instant due = j == from && from == s.currentStep() ? InDoubt.pending(inDoubtUntil, now) : null;
        if (j >= 0 && (s.shuttingDown() || due != null)) {
            // Not going on in this claim (stopping, a reply with no claim, a request still out): a scheduler compensates.
            String why = due == null ? reason : reason + "; step '" + s.step(j).name() + "' may still be applied until " + due;
            evs.add(event(s, TaskEvent.Type.COMPENSATING, -1, 0, now, why));
            Transition t = compensatingHolder(s, j).unlessCancelRequested(!forCancel).attempt(0).failureCount(0)
                    .lastError(why).recording(step).events(evs).release(TaskStatus.COMPENSATING, due == null ? now : due);
            return new Decision(t, List.of(), ifCancelled, null);
        }
        if (j >= 0) {
            evs.add(event(s, TaskEvent.Type.COMPENSATING, -1, 0, now, reason));
            evs.add(event(s, TaskEvent.Type.COMPENSATION_STARTED, j, 1, now, null));
            Transition t = compensatingHolder(s, j).unlessCancelRequested(!forCancel).attempt(1).failureCount(0)
                    .lastError(reason).recording(step).events(evs).keepHolding(TaskStatus.COMPENSATING);
            return new Decision(t, List.of(), ifCancelled, null);
        }
        TaskStatus end = forCancel ? TaskStatus.CANCELLED : TaskStatus.ERROR;
        evs.add(event(s, forCancel ? TaskEvent.Type.CANCELLED : TaskEvent.Type.ERROR, -1, 0, now, reason));
        int at = step != null ? step.index() : s.currentStep();
        // In ERROR the attempt counts only attempts whose effect may have applied (none when the
        // failed step is not in the compensation range), so that a later cancel compensates them.
        int attempts = forCancel || from >= s.currentStep() ? s.attempt() : 0;
        Transition t = holder(s, at).unlessCancelRequested(!forCancel).attempt(attempts)
                .failureCount(s.failureCount()).lastError(reason).recording(step).events(evs).end(end);
        // A branch or fan-out element fails as the step it stands for: its parent's step fails (and alerts if the
        // parent ends in ERROR); the unit raises no alert of its own
        List<Alert> alerts = forCancel || wf.isGroupUnit() ? List.of()
                : List.of(alert(s, TaskStatus.ERROR, s.step(at).name(), reason, now));
        return new Decision(t, alerts, ifCancelled, null);
    }

    /** Moves a task this runtime cannot run to ERROR, keeping its input and progress, and alerts. */
    private static Decision park(Snapshot s, String rawReason, Instant now) {
        String reason = StorableText.replaceUnstorable(rawReason);
        TaskEvent error = new TaskEvent(s.taskId(), s.businessKey(), s.workflowName(), TaskEvent.Type.ERROR,
                s.currentStep(), null, s.attempt(), now, reason);
        // The attempt of this claim never ran; earlier ones may have applied (a later cancel compensates them).
        // The step's own name and deadline stay on the row when this runtime knows them (an input it
        // cannot decode): a resubmit's claim is then bounded by the step's deadline, not 30 s.
        Workflow<?> wf = s.workflow();
        StepDefinition<?> def = wf != null && s.currentStep() < wf.steps().size() ? wf.steps().get(s.currentStep())
                : null;
        Transition t = Transition.holder(s.taskId(), s.lease(), s.status(), s.currentStep())
                .at(s.currentStep(), def == null ? null : def.name(),
                        def == null ? UNKNOWN_STEP_TIMEOUT : def.completeWithin(s.status() == TaskStatus.COMPENSATING))
                .attempt(Math.max(0, s.attempt() - 1)).failureCount(s.failureCount())
                .lastError(reason).events(error).end(TaskStatus.ERROR);
        return new Decision(t, List.of(alert(s, TaskStatus.ERROR, null, reason, now)), null, null);
    }

    static boolean retries(RetryPolicy policy, Throwable error, int attempt) {
        return !policy.isNonRetryable(error) && attempt < policy.maxAttempts();
    }

    /**
     * Whether a step that failed for good with {@code error} may have applied its effect (and is compensated too,
     * so compensations tolerate nothing to undo): not after a definite refusal (non-retryable); yes after errors
     * that may be transient (a lost reply, a time-out). The last error decides: a 503, then "card declined", applied nothing.
     */
    private static boolean mayHaveApplied(RetryPolicy policy, Throwable error) {
        // an unstorable result: the step ran; only its result could not be recorded
        return error instanceof UnstorableResultException || !policy.isNonRetryable(error);
    }

    /** A scheduler's transition to {@code step}, named and timed from the workflow. */
    static Transition.Builder holder(Snapshot s, int step) {
        StepDefinition<?> def = s.step(step);
        return Transition.holder(s.taskId(), s.lease(), s.status(), s.currentStep()).at(step, def.name(),
                def.completeWithin());
    }

    /** A scheduler's transition to compensating {@code step}, timed by the step's compensation deadline. */
    static Transition.Builder compensatingHolder(Snapshot s, int step) {
        StepDefinition<?> def = s.step(step);
        return Transition.holder(s.taskId(), s.lease(), s.status(), s.currentStep()).at(step, def.name(),
                def.compensateWithin());
    }

    static TaskEvent event(Snapshot s, TaskEvent.Type type, int step, int attempt, Instant at, String message) {
        String name = step >= 0 ? s.step(step).name() : null;
        return new TaskEvent(s.taskId(), s.businessKey(), s.workflowName(), type, step, name, attempt, at, message);
    }

    static Alert alert(Snapshot s, TaskStatus status, String stepName, String message, Instant at) {
        return new Alert(s.taskId(), s.businessKey(), s.workflowName(), status, stepName, message, at);
    }

    /**
     * An error as recorded on a task: type and message, capped at 2,000 chars (never splitting a surrogate
     * pair), unstorable characters replaced ({@link StorableText#replaceUnstorable}): always recordable.
     */
    static String describe(Throwable e) {
        String m = e.getMessage();
        String text = e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
        if (text.length() > MAX_ERROR_LENGTH) {
            int end = Character.isHighSurrogate(text.charAt(MAX_ERROR_LENGTH - 1)) ? MAX_ERROR_LENGTH - 1
                    : MAX_ERROR_LENGTH;
            text = text.substring(0, end) + "…";
        }
        return StorableText.replaceUnstorable(text);
    }

    /**
     * A step ran (its effect may have happened) but its result cannot be recorded (unstorable text, or the store
     * refused it): the step fails without retry (deterministic) and is compensated with the steps before it.
     */
    static final class UnstorableResultException extends NonRetryableException {
        private static final long serialVersionUID = 1L;

        UnstorableResultException(String message) {
            super(message);
        }
    }
}
