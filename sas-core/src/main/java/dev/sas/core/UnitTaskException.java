package dev.sas.core;

import java.util.Objects;
import java.util.Set;

/**
 * An operator action refused on a unit task (a parallel branch or a fan-out element) because the
 * group step of its parent that started it has ended: the parent's step runs and compensates its
 * units, so the unit is not resubmitted or cancelled on its own. The message names the unit, its
 * parent and what to do (resubmit the parent if it is in {@code ERROR} or {@code COMPENSATION_FAILED}).
 * A {@link TaskStateException}, so callers that handle refused actions handle this one too.
 */
public final class UnitTaskException extends TaskStateException {

    private static final long serialVersionUID = 1L;

    private final TaskId parentId;

    /**
     * @param message why, naming the unit, its parent and what to do
     * @param taskId the unit task
     * @param actual the unit's state
     * @param parentId the parent task
     * @throws NullPointerException if {@code taskId} or {@code parentId} is null
     */
    public UnitTaskException(String message, TaskId taskId, TaskStatus actual, TaskId parentId) {
        super(taskId, actual, Set.of(), message);
        this.parentId = Objects.requireNonNull(parentId, "parentId must not be null");
    }

    /** The parent task, the one to act on instead. */
    public TaskId parentId() {
        return parentId;
    }
}
