package dev.sas.core.spi;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One conditional change of a task, with its step row and events, written atomically. The store
 * applies it only if the task still has {@link #lease()}, is still in {@link #fromStatus()} at
 * {@link #fromStep()}, and the {@link #guard()} holds; otherwise it changes nothing and reports
 * {@link WriteOutcome#STALE} (the fencing rule). Every transition has an {@link #id()}; the store
 * keeps the id of the last transition it applied to each task, so a replay of the same transition
 * (after a lost commit acknowledgement) is answered {@link WriteOutcome#APPLIED_ALREADY} and never
 * applied twice.
 *
 * <p>Build one with {@link #holder} (a scheduler writing under its claim) or {@link #expired} (a
 * supervisor recovering an expired claim), which name every field, for example
 * {@code Transition.holder(claim).unlessCancelRequested().at(2, "ship", timeout).attempt(1)
 * .recording(done).events(completed, started).keepHolding(TaskStatus.PROCESSING)}. Immutable and
 * thread-safe; the builders are not thread-safe.
 *
 * @param taskId the task
 * @param lease the lease the writer holds (or, for the supervisor, saw expire)
 * @param fromStatus the state the writer saw the task in ({@code PROCESSING} or {@code COMPENSATING},
 *     the states of a claimed task, or {@code AWAITING_COMPLETION}, a task whose step awaits a reply); the
 *     write applies only if the task is still in it
 * @param fromStep the step the writer saw the task at; the write applies only if the task is
 *     still there. With {@code fromStatus}, every applied transition that keeps the claim changes
 *     what the next one must name, so no transition computed from an older view can apply
 * @param guard which condition besides the lease must hold
 * @param unlessCancelRequested also require that no cancel was requested; if one was, change
 *     nothing and report {@link WriteOutcome#CANCEL_REQUESTED}
 * @param status the task's new state
 * @param keepLock true to keep holding the task (it moves on to its next step in the same
 *     claim: {@code completeBy = now + stepTimeout}); false to release it. A released task whose
 *     {@code status} is {@link TaskStatus#AWAITING_COMPLETION} is held by {@link #AWAITING_COMPLETION_HOLDER}
 *     instead, with its lease and {@code completeBy} kept
 * @param currentStep the step to run next (or compensate next)
 * @param currentStepName its name (for event rows written at the next claim); may be null when terminal
 * @param attempt attempts at {@code currentStep} so far (1 when kept locked for a new step); for
 *     a task left in {@code ERROR}, only those whose effect may have applied (an attempt that
 *     failed definitely is not counted), which a later cancel compensates
 * @param failureCount supervisor time-outs of {@code currentStep} so far
 * @param stepTimeout deadline of one attempt at {@code currentStep}
 * @param nextAttemptAt when a released, non-terminal task is due again
 * @param lastError error to record on the task, or null to keep the current one
 * @param step step row to write, or null
 * @param events events to append, in order
 * @param id this transition's identity (never 0), drawn at random by the builders: a replay
 *     carries the same id, a transition computed again (even with the same content) another one
 * @param statusChannel the task's status channel, or null: the store also writes the events to this
 *     channel's outbox ({@link StatusOutbox}). {@link #holder(ClaimedTask)} and
 *     {@link #expired(ExpiredTask)} take it from the claim; a runtime stamps it on every
 *     transition it writes ({@link #withStatusChannel})
 */
public record Transition(
        TaskId taskId,
        long lease,
        TaskStatus fromStatus,
        int fromStep,
        Guard guard,
        boolean unlessCancelRequested,
        TaskStatus status,
        boolean keepLock,
        int currentStep,
        String currentStepName,
        int attempt,
        int failureCount,
        Duration stepTimeout,
        Instant nextAttemptAt,
        String lastError,
        StepUpdate step,
        List<TaskEvent> events,
        long id,
        String statusChannel) {

    /**
     * The {@code lockedBy} of a task whose step awaits its completion ({@link TaskStatus#AWAITING_COMPLETION}): no
     * runtime holds it, but its lease and deadline stay in force, so the completion is fenced by them and
     * the supervisor's expired scan finds it when its deadline passes, through the same index. Stored
     * (JDBC: {@code locked_by}); {@code sas:awaiting-reply} before 0.3, rewritten by schema V17.
     */
    public static final String AWAITING_COMPLETION_HOLDER = "sas:awaiting-completion";

    /**
     * @throws NullPointerException if a required field is null
     * @throws IllegalArgumentException if a terminal transition keeps the lock, {@code fromStatus}
     *     is not a claimed task's state, or {@code id} is 0
     */
    public Transition {
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(fromStatus, "fromStatus");
        if (fromStatus != TaskStatus.PROCESSING && fromStatus != TaskStatus.COMPENSATING
                && fromStatus != TaskStatus.AWAITING_COMPLETION) {
            throw new IllegalArgumentException("fromStatus must be PROCESSING, COMPENSATING or AWAITING_COMPLETION (the"
                    + " states of a held task), was " + fromStatus);
        }
        if (id == 0) {
            throw new IllegalArgumentException("id must not be 0 (stores use 0 for none); use the builders,"
                    + " which draw one");
        }
        Objects.requireNonNull(guard, "guard");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(stepTimeout, "stepTimeout");
        events = List.copyOf(events);
        if (keepLock && status == TaskStatus.AWAITING_COMPLETION) {
            throw new IllegalArgumentException("a transition to AWAITING_COMPLETION releases the claim; use"
                    + " Builder.awaitCompletion()");
        }
        if (keepLock && status.isTerminal()) {
            throw new IllegalArgumentException("a terminal transition cannot keep the lock: " + status);
        }
    }

    /**
     * This transition with {@code statusChannel} as the task's status channel: the same id, so a replay
     * stays a replay.
     */
    public Transition withStatusChannel(String statusChannel) {
        return Objects.equals(statusChannel, this.statusChannel) ? this : new Transition(taskId, lease, fromStatus,
                fromStep, guard, unlessCancelRequested, status, keepLock, currentStep, currentStepName, attempt,
                failureCount, stepTimeout, nextAttemptAt, lastError, step, events, id, statusChannel);
    }

    /**
     * Starts a transition written by the scheduler that holds the task's claim.
     *
     * @param taskId the task
     * @param lease the lease of the claim
     * @param fromStatus the state the scheduler saw the task in (PROCESSING or COMPENSATING)
     * @param fromStep the step the scheduler saw the task at
     * @return a builder with no step row, no events, attempt and failure count 0
     * @throws NullPointerException if {@code taskId} or {@code fromStatus} is null
     */
    public static Builder holder(TaskId taskId, long lease, TaskStatus fromStatus, int fromStep) {
        return new Builder(taskId, lease, fromStatus, fromStep, Guard.HOLDER);
    }

    /**
     * Starts a transition written under a claim, naming its task, lease, state and step.
     *
     * @throws NullPointerException if {@code claim} is null
     */
    public static Builder holder(ClaimedTask claim) {
        return holder(claim.taskId(), claim.lease(), claim.status(), claim.currentStep()).statusChannel(claim.statusChannel());
    }

    /**
     * Starts a transition written by the supervisor for a claim that expired.
     *
     * @param taskId the task
     * @param lease the lease of the claim that expired
     * @param fromStatus the state the task was in (PROCESSING or COMPENSATING)
     * @param fromStep the step that timed out
     * @return a builder with no step row, no events, attempt and failure count 0
     * @throws NullPointerException if {@code taskId} or {@code fromStatus} is null
     */
    public static Builder expired(TaskId taskId, long lease, TaskStatus fromStatus, int fromStep) {
        return new Builder(taskId, lease, fromStatus, fromStep, Guard.EXPIRED);
    }

    /**
     * Starts a recovery of the given expired claim, naming its task, lease, state and step.
     *
     * @throws NullPointerException if {@code claim} is null
     */
    public static Builder expired(ExpiredTask claim) {
        return expired(claim.taskId(), claim.lease(), claim.status(), claim.currentStep()).statusChannel(claim.statusChannel());
    }

    /**
     * Names the fields of a {@link Transition}; ends with {@link #keepHolding}, {@link #release} or
     * {@link #end}, which say what becomes of the claim and draw a new {@link Transition#id()} each
     * time (a retry of a write must reuse the built value, not build again). Not thread-safe.
     */
    public static final class Builder {
        private final TaskId taskId;
        private final long lease;
        private final TaskStatus fromStatus;
        private final int fromStep;
        private final Guard guard;
        private boolean unlessCancelRequested;
        private int currentStep;
        private String currentStepName;
        private Duration stepTimeout;
        private int attempt;
        private int failureCount;
        private String lastError;
        private StepUpdate step;
        private List<TaskEvent> events = List.of();
        private String statusChannel;

        private Builder(TaskId taskId, long lease, TaskStatus fromStatus, int fromStep, Guard guard) {
            this.taskId = Objects.requireNonNull(taskId, "taskId must not be null");
            this.lease = lease;
            this.fromStatus = Objects.requireNonNull(fromStatus, "fromStatus must not be null");
            this.fromStep = fromStep;
            this.guard = guard;
        }

        /** Yields to an operator's cancel: if one was requested, the store writes nothing. */
        public Builder unlessCancelRequested() {
            return unlessCancelRequested(true);
        }

        /** Yields to an operator's cancel when {@code yield} is true (see {@link #unlessCancelRequested()}). */
        public Builder unlessCancelRequested(boolean yield) {
            this.unlessCancelRequested = yield;
            return this;
        }

        /**
         * The step the task is at afterwards.
         *
         * @param index step position
         * @param name its name, or null when unknown
         * @param timeout deadline of one attempt at it
         * @throws NullPointerException if {@code timeout} is null
         */
        public Builder at(int index, String name, Duration timeout) {
            this.currentStep = index;
            this.currentStepName = name;
            this.stepTimeout = Objects.requireNonNull(timeout, "timeout must not be null");
            return this;
        }

        /** Attempts at the step so far (1 when the claim is kept for a new step). */
        public Builder attempt(int attempt) {
            this.attempt = attempt;
            return this;
        }

        /** Supervisor time-outs of the step so far. */
        public Builder failureCount(int failureCount) {
            this.failureCount = failureCount;
            return this;
        }

        /** The error to record on the task (null keeps the current one). */
        public Builder lastError(String lastError) {
            this.lastError = lastError;
            return this;
        }

        /** The step row to write with the transition, or null for none. */
        public Builder recording(StepUpdate step) {
            this.step = step;
            return this;
        }

        /** The task's status channel, or null (see {@link Transition#statusChannel()}). */
        public Builder statusChannel(String statusChannel) {
            this.statusChannel = statusChannel;
            return this;
        }

        /**
         * The events to append, in order.
         *
         * @throws NullPointerException if {@code events} or one of them is null
         */
        public Builder events(List<TaskEvent> events) {
            this.events = List.copyOf(events);
            return this;
        }

        /**
         * The events to append, in order.
         *
         * @throws NullPointerException if one of them is null
         */
        public Builder events(TaskEvent... events) {
            return events(List.of(events));
        }

        /**
         * The writer keeps the claim and goes on at the step set with {@link #at}.
         *
         * @throws IllegalArgumentException if {@code status} is terminal
         * @throws NullPointerException if no step was set with {@link #at}
         */
        public Transition keepHolding(TaskStatus status) {
            return build(status, true, null);
        }

        /**
         * Releases the claim and leaves the task {@link TaskStatus#AWAITING_COMPLETION}: held by
         * {@link Transition#AWAITING_COMPLETION_HOLDER}, with its lease and deadline kept, until a completion
         * or the supervisor moves it on.
         *
         * @throws NullPointerException if no step was set with {@link #at}
         */
        public Transition awaitCompletion() {
            return build(TaskStatus.AWAITING_COMPLETION, false, null);
        }

        /**
         * Releases the claim; the task is due again at {@code dueAt}.
         *
         * @throws IllegalArgumentException if {@code status} is terminal
         * @throws NullPointerException if {@code dueAt} is null or no step was set with {@link #at}
         */
        public Transition release(TaskStatus status, Instant dueAt) {
            Objects.requireNonNull(dueAt, "dueAt must not be null");
            if (status.isTerminal() || status == TaskStatus.AWAITING_COMPLETION) {
                throw new IllegalArgumentException("a released task must be due again, but " + status
                        + (status.isTerminal() ? " is terminal" : " is not due (use awaitCompletion())"));
            }
            return build(status, false, dueAt);
        }

        /**
         * Releases the claim and leaves the task in a terminal state.
         *
         * @throws IllegalArgumentException if {@code status} is not terminal
         * @throws NullPointerException if no step was set with {@link #at}
         */
        public Transition end(TaskStatus status) {
            if (!status.isTerminal()) {
                throw new IllegalArgumentException("end needs a terminal state, was " + status);
            }
            return build(status, false, null);
        }

        private Transition build(TaskStatus status, boolean keepLock, Instant nextAttemptAt) {
            return new Transition(taskId, lease, fromStatus, fromStep, guard, unlessCancelRequested, status, keepLock,
                    currentStep, currentStepName, attempt, failureCount, stepTimeout, nextAttemptAt, lastError, step,
                    events, newId(), statusChannel);
        }
    }

    /** A random id, never 0: unique across nodes without coordination (collisions are negligible at 2^-64). */
    private static long newId() {
        long id;
        do {
            id = java.util.concurrent.ThreadLocalRandom.current().nextLong();
        } while (id == 0);
        return id;
    }

    /** Which condition, besides an unchanged lease, a transition requires. */
    public enum Guard {
        /** The writer still holds the claim: locked, and {@code completeBy >= now}. */
        HOLDER,
        /** The supervisor recovers an expired claim: locked, and {@code completeBy < now}. */
        EXPIRED
    }
}
