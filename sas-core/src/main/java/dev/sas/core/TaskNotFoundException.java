package dev.sas.core;

/** No task with this id exists (it never did, or it was purged after its retention period). */
public class TaskNotFoundException extends SasException {

    private static final long serialVersionUID = 1L;

    private final TaskId taskId;

    /** @param taskId the id asked for */
    public TaskNotFoundException(TaskId taskId) {
        super("task " + taskId + " does not exist (never submitted, or purged after its retention period)");
        this.taskId = taskId;
    }

    /** The id asked for. */
    public TaskId taskId() {
        return taskId;
    }
}
