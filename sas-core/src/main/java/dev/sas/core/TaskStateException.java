package dev.sas.core;

import java.util.Objects;
import java.util.Set;

/**
 * An operation needs the task in another state, e.g. a resubmit of a task that is not in
 * {@code ERROR} or {@code COMPENSATION_FAILED}. Names the task, its state and the states that
 * would have been accepted.
 */
public class TaskStateException extends SasException {

    private static final long serialVersionUID = 1L;

    private final TaskId taskId;
    private final TaskStatus actual;
    private final Set<TaskStatus> allowed;

    /**
     * @param operation what was attempted, e.g. "resubmit"
     * @param taskId the task
     * @param actual its state when the operation was refused
     * @param allowed the states the operation accepts
     */
    public TaskStateException(String operation, TaskId taskId, TaskStatus actual, Set<TaskStatus> allowed) {
        super("cannot " + operation + " task " + taskId + ": it is " + actual + ", and " + operation
                + " needs one of " + allowed);
        this.taskId = Objects.requireNonNull(taskId, "taskId must not be null");
        this.actual = actual;
        this.allowed = Set.copyOf(allowed);
    }

    /**
     * A refusal with its own message, for subclasses that say more than the states.
     *
     * @param taskId the task
     * @param actual its state when the operation was refused
     * @param allowed the states the operation accepts (empty when the state alone did not decide)
     * @param message what was refused, why, and what to do
     */
    protected TaskStateException(TaskId taskId, TaskStatus actual, Set<TaskStatus> allowed, String message) {
        super(message);
        this.taskId = Objects.requireNonNull(taskId, "taskId must not be null");
        this.actual = actual;
        this.allowed = Set.copyOf(allowed);
    }

    /** The task. */
    public TaskId taskId() {
        return taskId;
    }

    /** Its state when the operation was refused. */
    public TaskStatus actual() {
        return actual;
    }

    /** The states the operation accepts. */
    public Set<TaskStatus> allowed() {
        return allowed;
    }
}
