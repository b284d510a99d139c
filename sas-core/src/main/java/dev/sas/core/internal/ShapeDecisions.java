package dev.sas.core.internal;

import static dev.sas.core.internal.TaskStateMachine.CANCELLED_BY_OPERATOR;
import static dev.sas.core.internal.TaskStateMachine.advance;
import static dev.sas.core.internal.TaskStateMachine.compensatingHolder;
import static dev.sas.core.internal.TaskStateMachine.event;
import static dev.sas.core.internal.TaskStateMachine.holder;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.internal.TaskStateMachine.CancelRequested;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.Outcome;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.Transition;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The task state machine's decisions for the workflow shapes that are not a plain call: a
 * conditional step whose condition did not hold (skipped, never compensated) and a durable timer
 * (started: the task rests WAITING, held by nobody, due when it fires; fired: the step completes).
 * Part of {@link TaskStateMachine}: pure, thread-safe.
 */
final class ShapeDecisions {

    private ShapeDecisions() {
    }

    /** What happened to a step of a special shape. */
    sealed interface Shape extends Outcome permits StepSkipped, TimerStarted, TimerFired, SkippedNotCompensated {
    }

    /** The current step's condition did not hold when it came up: it is not run. */
    record StepSkipped(Instant startedAt) implements Shape {
    }

    /** The current step is a timer that fires at {@code firesAt} (database time), not yet reached. */
    record TimerStarted(Instant firesAt, Instant startedAt) implements Shape {
        TimerStarted {
            Objects.requireNonNull(firesAt, "firesAt must not be null");
        }
    }

    /** The current step is a timer whose instant {@code firesAt} has come: it completes. */
    record TimerFired(Instant firesAt, Instant startedAt) implements Shape {
        TimerFired {
            Objects.requireNonNull(firesAt, "firesAt must not be null");
        }
    }

    /**
     * Compensating, the task came to a step that was skipped (a compensation chosen where the
     * skipped steps were not known: by the supervisor, or on a reply): it is passed over, not run.
     */
    record SkippedNotCompensated() implements Shape {
    }

    static Decision decide(Snapshot s, Shape o, Instant now) {
        if (o instanceof StepSkipped k) {
            return skipped(s, k, now);
        } else if (o instanceof TimerStarted t) {
            return t.firesAt().isAfter(now) ? timerStarted(s, t, now) : timerFired(s, t.firesAt(), t.startedAt(), now);
        } else if (o instanceof TimerFired f) {
            return timerFired(s, f.firesAt(), f.startedAt(), now);
        }
        return passOver(s, now);
    }

    /** Recorded SKIPPED and the task goes on; a cancel compensates only the steps before it. */
    private static Decision skipped(Snapshot s, StepSkipped o, Instant now) {
        int i = s.currentStep();
        StepUpdate skipped = StepUpdate.skipped(i, s.step(i).name(), s.attempt(), o.startedAt(), now);
        TaskEvent ev = event(s, TaskEvent.Type.STEP_SKIPPED, i, s.attempt(), now, "its condition did not hold");
        return advance(s, skipped, ev, i - 1, now);
    }

    /**
     * The timer waits: the task is released WAITING, due at {@code firesAt}, with the fire time kept
     * in the step row, so it holds no thread and no slot and any node that claims it then fires it.
     * The claim's attempt is given back. Yields to a cancel, which then compensates the steps before it.
     */
    private static Decision timerStarted(Snapshot s, TimerStarted o, Instant now) {
        int i = s.currentStep();
        CancelRequested cancel = new CancelRequested(i - 1, null, List.of(), CANCELLED_BY_OPERATOR);
        if (s.cancelRequested()) {
            return TaskStateMachine.decide(s, cancel, now);
        }
        StepUpdate waiting = StepUpdate.waiting(i, s.step(i).name(), s.attempt(), o.firesAt(), o.startedAt());
        TaskEvent ev = event(s, TaskEvent.Type.TIMER_STARTED, i, s.attempt(), now, "until " + o.firesAt());
        // the reason is the last error, as for a task held back by flow control: console and CLI show until when
        String reason = "waiting for timer '" + s.step(i).name() + "' until " + o.firesAt();
        Transition t = holder(s, i).unlessCancelRequested().attempt(Math.max(0, s.attempt() - 1))
                .failureCount(s.failureCount()).lastError(reason).recording(waiting).events(ev)
                .release(TaskStatus.WAITING, o.firesAt());
        return new Decision(t, List.of(), cancel, null);
    }

    /** The timer's instant has come: the step completes with it as its output. */
    private static Decision timerFired(Snapshot s, Instant firesAt, Instant startedAt, Instant now) {
        int i = s.currentStep();
        StepUpdate done = StepUpdate.completed(i, s.step(i).name(), s.attempt(), firesAt.toString(), startedAt, now);
        TaskEvent ev = event(s, TaskEvent.Type.TIMER_FIRED, i, s.attempt(), now, "due at " + firesAt);
        return advance(s, done, ev, i - 1, now);
    }

    /** Goes on compensating below a skipped step, or ends the task, recording nothing for the skipped step. */
    private static Decision passOver(Snapshot s, Instant now) {
        int i = s.currentStep();
        int next = TaskRun.lastCompensable(s.workflow(), i - 1, s.skipped());
        if (next >= 0) {
            Transition.Builder b = compensatingHolder(s, next).failureCount(0);
            Transition t = s.shuttingDown() ? b.attempt(0).release(TaskStatus.COMPENSATING, now)
                    : b.attempt(1).events(event(s, TaskEvent.Type.COMPENSATION_STARTED, next, 1, now, null))
                            .keepHolding(TaskStatus.COMPENSATING);
            return new Decision(t, List.of(), null, null);
        }
        TaskStatus end = s.cancelRequested() ? TaskStatus.CANCELLED : TaskStatus.COMPENSATED;
        TaskEvent.Type endEvent = end == TaskStatus.CANCELLED ? TaskEvent.Type.CANCELLED : TaskEvent.Type.COMPENSATED;
        Transition t = holder(s, i).unlessCancelRequested(!s.cancelRequested()).attempt(s.attempt()).failureCount(0)
                .events(event(s, endEvent, -1, 0, now, null)).end(end);
        CancelRequested ifCancelled = s.cancelRequested() ? null
                : new CancelRequested(i - 1, null, List.of(), CANCELLED_BY_OPERATOR);
        return new Decision(t, List.of(), ifCancelled, null);
    }
}
