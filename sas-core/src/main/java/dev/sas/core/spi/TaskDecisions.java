package dev.sas.core.spi;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The task state machine's decisions that a store carries out on its own: an operator's resubmit
 * and cancel, parking a task no live runtime can run and making it due again, and waking a task
 * held back for an agent's capacity. A store reads a {@link TaskSnapshot} of the row under its lock
 * (or fences its write on what it read), asks here, and writes the {@link TaskChange} it gets back
 * with the event in one transaction; no store decides these itself (and no SQL names the states
 * they move between). The decisions of a scheduler and of the supervisor come back from them as a
 * {@link Transition}.
 *
 * <p>Pure: no clock (time comes in as {@code now}), no store, no state. Thread-safe.
 */
public final class TaskDecisions {

    private TaskDecisions() {
    }

    /**
     * The state a new task is written in: {@code PROCESSING} when the submitting node claims it in
     * the same write to start it at once (lease 1, attempt 1), else {@code PENDING}.
     */
    public static TaskStatus submitted(boolean claimedAtSubmit) {
        return claimedAtSubmit ? TaskStatus.PROCESSING : TaskStatus.PENDING;
    }

    /**
     * Whether an unclaimed task in state {@code status} is claimed when due ({@link StateStore#claim}):
     * {@code PENDING}, {@code WAITING} (held back for an agent, claimed again by itself) and
     * {@code COMPENSATING}. A store's claim predicate names the same states.
     */
    public static boolean claimable(TaskStatus status) {
        return status == TaskStatus.PENDING || status == TaskStatus.WAITING || status == TaskStatus.COMPENSATING;
    }

    /**
     * The state a claim leaves a {@linkplain #claimable claimable} task in: a step to run is
     * {@code PROCESSING}, a compensation stays {@code COMPENSATING}.
     *
     * @throws IllegalArgumentException if {@code status} is not claimable
     */
    public static TaskStatus claimed(TaskStatus status) {
        if (!claimable(status)) {
            throw new IllegalArgumentException("a " + status + " task is not claimable");
        }
        return status == TaskStatus.COMPENSATING ? status : TaskStatus.PROCESSING;
    }

    /**
     * {@link StateStore#resubmit}: an {@code ERROR} task becomes {@code PENDING} (a
     * {@code COMPENSATION_FAILED} one {@code COMPENSATING}) at the step that failed, due at
     * {@code now}, with its attempts and failure count reset.
     *
     * @return the change, or empty if the task is in another state
     * @throws NullPointerException if an argument is null
     */
    public static Optional<TaskChange> resubmit(TaskSnapshot s, Instant now) {
        Objects.requireNonNull(s, "snapshot must not be null");
        Objects.requireNonNull(now, "now must not be null");
        TaskStatus next = switch (s.status()) {
            case ERROR -> TaskStatus.PENDING;
            case COMPENSATION_FAILED -> TaskStatus.COMPENSATING;
            default -> null;
        };
        // an ERROR or COMPENSATION_FAILED task has no holder: the transition that left it there released it
        return next == null ? Optional.empty()
                : Optional.of(TaskChange.keeping(s).withStatus(next).withDueAt(now).withCounts(0, 0));
    }

    /**
     * {@link StateStore#requestCancel}: marks the task cancel-requested, and makes it due now where
     * it would otherwise wait: an {@code ERROR} task becomes {@code PENDING} (failure count reset,
     * attempts kept: they tell whether the failed step may have applied), a {@code WAITING} task and
     * an unclaimed {@code PENDING} task due after {@code now} become due now, an
     * {@code AWAITING_COMPLETION} task is released and becomes {@code PENDING} (a scheduler compensates
     * it). {@code PARKED}, {@code PROCESSING} and {@code COMPENSATING} tasks are only marked.
     *
     * @return the change, or empty if the task is in another state or, unless it is in
     *     {@code ERROR}, already has a cancel requested
     * @throws NullPointerException if an argument is null
     */
    public static Optional<TaskChange> requestCancel(TaskSnapshot s, Instant now) {
        Objects.requireNonNull(s, "snapshot must not be null");
        Objects.requireNonNull(now, "now must not be null");
        if (s.status() != TaskStatus.ERROR && s.cancelRequested()) {
            return Optional.empty();
        }
        TaskChange c = TaskChange.keeping(s).withCancelRequested();
        return switch (s.status()) {
            case ERROR -> Optional.of(c.withStatus(TaskStatus.PENDING).withDueAt(now).withCounts(s.attempt(), 0));
            case AWAITING_COMPLETION -> Optional.of(c.withStatus(TaskStatus.PENDING).withDueAt(now).withHolderReleased());
            case WAITING -> Optional.of(c.withDueAt(now));
            case PENDING -> Optional.of(!s.held() && isAfter(s.nextAttemptAt(), now) ? c.withDueAt(now) : c);
            case PARKED, PROCESSING, COMPENSATING -> Optional.of(c);
            default -> Optional.empty();
        };
    }

    /**
     * {@link DeploymentStore#park}: an unclaimed {@code PENDING} task becomes {@code PARKED} with
     * {@code reason} as its last error, its step, attempts and due time kept. (Which tasks are due
     * and whether a live runtime can run them is the store's read.)
     *
     * @return the change, or empty if the task is claimed or in another state
     * @throws NullPointerException if an argument is null
     */
    public static Optional<TaskChange> park(TaskSnapshot s, String reason) {
        Objects.requireNonNull(s, "snapshot must not be null");
        Objects.requireNonNull(reason, "reason must not be null");
        return s.status() == TaskStatus.PENDING && !s.held()
                ? Optional.of(TaskChange.keeping(s).withStatus(TaskStatus.PARKED).withLastError(reason))
                : Optional.empty();
    }

    /**
     * {@link DeploymentStore#unpark}: a {@code PARKED} task becomes {@code PENDING}, due at {@code now}.
     *
     * @return the change, or empty if the task left {@code PARKED}
     * @throws NullPointerException if an argument is null
     */
    public static Optional<TaskChange> unpark(TaskSnapshot s, Instant now) {
        Objects.requireNonNull(s, "snapshot must not be null");
        Objects.requireNonNull(now, "now must not be null");
        return s.status() == TaskStatus.PARKED
                ? Optional.of(TaskChange.keeping(s).withStatus(TaskStatus.PENDING).withDueAt(now))
                : Optional.empty();
    }

    /**
     * {@link FlowControlStore#wakeWaiting}: an unclaimed {@code WAITING} task not yet due becomes due at
     * its submission time (or {@code now}, if that is earlier), so it is claimed before the tasks of
     * its priority submitted after it.
     *
     * @return the change, or empty if the task is claimed, due, or in another state
     * @throws NullPointerException if an argument is null
     */
    public static Optional<TaskChange> wake(TaskSnapshot s, Instant now) {
        Objects.requireNonNull(s, "snapshot must not be null");
        Objects.requireNonNull(now, "now must not be null");
        if (s.status() != TaskStatus.WAITING || s.held() || !isAfter(s.nextAttemptAt(), now)) {
            return Optional.empty();
        }
        return Optional.of(TaskChange.keeping(s).withDueAt(s.createdAt().isBefore(now) ? s.createdAt() : now));
    }


    /**
     * {@link VersionMoves#move}: whether an unclaimed task may move to another version of its
     * workflow, and its state after. A {@code PENDING} task keeps its due time (a delayed or
     * retrying task goes on waiting); a {@code WAITING} task (held back for its old step's agent)
     * becomes {@code PENDING}, due at {@code now}; a {@code PARKED} one too; an {@code ERROR} one
     * becomes {@code PENDING} due at {@code now} with its attempts and failure count reset, as a
     * resubmit does. A claimed task (a step running, a reply awaited), one whose cancel was
     * requested, and a task compensating, failed in compensation or finished are not moved.
     *
     * @return the change, or empty if the task may not move
     * @throws NullPointerException if an argument is null
     */
    public static Optional<TaskChange> moveVersion(TaskSnapshot s, Instant now) {
        Objects.requireNonNull(s, "snapshot must not be null");
        Objects.requireNonNull(now, "now must not be null");
        if (s.held() || s.cancelRequested()) {
            return Optional.empty();
        }
        TaskChange c = TaskChange.keeping(s);
        return switch (s.status()) {
            case PENDING -> Optional.of(c);
            case WAITING, PARKED -> Optional.of(c.withStatus(TaskStatus.PENDING).withDueAt(now));
            case ERROR -> Optional.of(c.withStatus(TaskStatus.PENDING).withDueAt(now).withCounts(0, 0));
            default -> Optional.empty();
        };
    }

    /**
     * Whether an operator may resubmit or cancel, on its own, a unit task: a parallel branch or a
     * fan-out element, which its parent's group step started and joins. Only while that group has not
     * ended, that is while the parent is at the group step and neither finished, failed nor
     * compensating: once it has ended, the parent has compensated (or will compensate, or resubmitting
     * it will run again) what the unit did, and running the unit again on its own would redo work no
     * one joins or undoes (a reservation for an order already compensated). The client asks here for
     * every store, before the store's own decision ({@link #resubmit}, {@link #requestCancel}).
     *
     * @param action what was asked, e.g. "resubmit"
     * @param unit the unit task
     * @param parent the parent task
     * @param groupStep the name of the parent's step that started the unit
     * @param parentStatus the parent's state, or null if the parent no longer exists
     * @param parentAtStep whether the parent's current step is {@code groupStep}
     * @return empty if the action may go on; else why not, naming the unit, its parent and what to do
     * @throws NullPointerException if {@code action}, {@code unit}, {@code parent} or {@code groupStep} is null
     */
    public static Optional<String> unitAction(String action, TaskId unit, TaskId parent, String groupStep,
            TaskStatus parentStatus, boolean parentAtStep) {
        Objects.requireNonNull(action, "action must not be null");
        Objects.requireNonNull(unit, "unit must not be null");
        Objects.requireNonNull(parent, "parent must not be null");
        Objects.requireNonNull(groupStep, "groupStep must not be null");
        if (parentStatus == null) {
            return Optional.of("cannot " + action + " task " + unit + " on its own: it is a unit of step '" + groupStep
                    + "' of task " + parent + ", which no longer exists");
        }
        boolean running = parentAtStep && switch (parentStatus) {
            case PENDING, WAITING, PARKED, PROCESSING, AWAITING_COMPLETION -> true;
            default -> false;
        };
        if (running) {
            return Optional.empty();
        }
        String where = (parentAtStep ? "whose step has ended (" : "which has left that step (") + parent + " is "
                + parentStatus + ")";
        boolean resubmittable = parentStatus == TaskStatus.ERROR || parentStatus == TaskStatus.COMPENSATION_FAILED;
        return Optional.of("cannot " + action + " task " + unit + " on its own: it is a unit (a parallel branch or"
                + " fan-out element) of step '" + groupStep + "' of task " + parent + ", " + where + "; the parent's"
                + " step runs and compensates its units. " + (resubmittable
                        ? "Resubmit task " + parent + " instead: it starts the step's failed units again (or goes on"
                                + " compensating)."
                        : parentStatus == TaskStatus.COMPENSATING
                                ? "Leave the unit to task " + parent + "'s compensation."
                                : "Leave the unit as it is: task " + parent + " has finished with it."));
    }

    private static boolean isAfter(Instant dueAt, Instant now) {
        return dueAt != null && dueAt.isAfter(now);
    }
}
