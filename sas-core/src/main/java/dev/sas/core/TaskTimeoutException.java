package dev.sas.core;

import java.time.Duration;

/**
 * {@link TaskHandle#await(Duration)} gave up: the task had not reached a terminal state in time.
 * The task itself is unaffected and goes on; await it again or look it up later.
 */
public class TaskTimeoutException extends SasException {

    private static final long serialVersionUID = 1L;

    private final TaskId taskId;
    private final TaskStatus lastSeen;

    /**
     * @param taskId the task awaited
     * @param lastSeen its state when the wait ended
     * @param waited how long the caller waited
     */
    public TaskTimeoutException(TaskId taskId, TaskStatus lastSeen, Duration waited) {
        super("task " + taskId + " is still " + lastSeen + " after waiting " + waited
                + "; it goes on running: await it again or look it up with SasClient.find");
        this.taskId = taskId;
        this.lastSeen = lastSeen;
    }

    /** The task awaited. */
    public TaskId taskId() {
        return taskId;
    }

    /** Its state when the wait ended. */
    public TaskStatus lastSeen() {
        return lastSeen;
    }
}
