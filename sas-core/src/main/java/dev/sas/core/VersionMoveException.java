package dev.sas.core;

import java.util.Objects;

/**
 * A task cannot be moved to the version asked for ({@link OperationsClient#moveVersion}): the
 * version is not known to the client, declares no mapping from the task's version, or a step of the
 * task has no place in it. The message says which and what to do. Nothing was changed.
 */
public class VersionMoveException extends SasException {

    private static final long serialVersionUID = 1L;

    private final TaskId taskId;
    private final int toVersion;

    /**
     * @param taskId the task
     * @param toVersion the version it was to move to
     * @param message what was wrong and what to do
     */
    public VersionMoveException(TaskId taskId, int toVersion, String message) {
        super("cannot move task " + taskId + " to v" + toVersion + ": " + message);
        this.taskId = Objects.requireNonNull(taskId, "taskId must not be null");
        this.toVersion = toVersion;
    }

    /** The task. */
    public TaskId taskId() {
        return taskId;
    }

    /** The version it was to move to. */
    public int toVersion() {
        return toVersion;
    }
}
