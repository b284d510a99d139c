package dev.sas.core;

import java.time.Instant;
import java.util.Objects;

/**
 * One recorded transition of a task. Events are written in the same transaction as the state
 * change they describe, delivered to listeners after it commits, and queryable per task.
 *
 * @param taskId the task
 * @param businessKey the task's business key
 * @param workflow the workflow name
 * @param type what happened
 * @param stepIndex the step concerned, or -1
 * @param stepName the step concerned, or null
 * @param attempt the step attempt, or 0
 * @param at when it happened (the recording instance's clock)
 * @param message detail such as an error message, or null
 */
public record TaskEvent(
        TaskId taskId,
        String businessKey,
        String workflow,
        Type type,
        int stepIndex,
        String stepName,
        int attempt,
        Instant at,
        String message) {

    /** @throws NullPointerException if {@code taskId}, {@code type} or {@code at} is null */
    public TaskEvent {
        Objects.requireNonNull(taskId, "taskId must not be null");
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(at, "at must not be null");
    }

    /** Kinds of transition. */
    public enum Type {
        /** The task was submitted. */
        RECEIVED,
        /** A step attempt started. */
        STEP_STARTED,
        /** A step completed and its output was recorded. */
        STEP_COMPLETED,
        /** A step attempt failed and another is scheduled. */
        STEP_RETRYING,
        /** The supervisor found a step past its deadline and released it for a retry. */
        STEP_TIMED_OUT,
        /** A step failed for good. */
        STEP_FAILED,
        /** Every step completed. */
        PROCESSED,
        /** The task stopped in error. */
        ERROR,
        /** Compensation of completed steps began. */
        COMPENSATING,
        /** A compensation attempt started. */
        COMPENSATION_STARTED,
        /** A step's compensation completed. */
        COMPENSATION_COMPLETED,
        /** Every compensation ran. */
        COMPENSATED,
        /** A compensation failed for good. */
        COMPENSATION_FAILED,
        /** An operator asked to cancel. */
        CANCEL_REQUESTED,
        /** The task was cancelled. */
        CANCELLED,
        /** An operator resubmitted the task. */
        RESUBMITTED,
        /** The supervisor parked the task: no live runtime can run its workflow version (the message says since when). */
        PARKED,
        /** The supervisor made a parked task due again: a runtime that registers its workflow version is live. */
        UNPARKED,
        /**
         * The step's (or compensation's) agent call was held back by the agent's flow control: no
         * capacity, rate limit reached, or circuit breaker open (the message says which and until
         * when). The attempt was not spent; the task waits and comes back by itself.
         */
        WAITING,
        /**
         * A step that awaits its completion started waiting (its request sent, its child tasks
         * submitted): the task rests {@link TaskStatus#AWAITING_COMPLETION} until the completion or
         * the step's deadline. Called {@code REPLY_AWAITED} before 0.3.
         */
        COMPLETION_AWAITED,
        /**
         * A completion of the awaiting step was accepted (an outside completion, an agent's reply, or
         * its child tasks' outcome; the message says whether it completed or failed the attempt).
         * Called {@code REPLY_RECEIVED} before 0.3.
         */
        COMPLETION_RECEIVED,
        /**
         * An operator moved the task to another version of its workflow (the message says from which
         * version and step to which, and who); it continues at the event's step.
         */
        VERSION_MOVED,
        /**
         * A conditional step was not run: its condition did not hold when it came up. It is recorded
         * {@link StepStatus#SKIPPED} and never compensated.
         */
        STEP_SKIPPED,
        /**
         * A durable timer started: the task rests, held by no node, until the instant the message
         * names ("until 2030-01-03T00:00:00Z", database time).
         */
        TIMER_STARTED,
        /** A durable timer fired: its step completed, with the instant it fired at as its output. */
        TIMER_FIRED
    }
}
