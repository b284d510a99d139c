package dev.sas.core;

import java.time.Instant;
import java.util.Objects;

/**
 * Which tasks {@link SasClient#list(TaskQuery)} returns: optionally only one state and one
 * workflow, at most {@code limit}, oldest first, starting after a cursor (the last task of the
 * previous page). Immutable; each {@code with...} returns a new query.
 *
 * <pre>{@code
 * TaskQuery q = TaskQuery.all().withStatus(TaskStatus.ERROR).withWorkflow("orders").withLimit(100);
 * List<TaskInfo> page = client.list(q);
 * List<TaskInfo> next = client.list(q.after(page.get(page.size() - 1)));
 * }</pre>
 *
 * @param status only tasks in this state, or null for every state
 * @param workflow only tasks of this workflow, or null for every workflow
 * @param limit the most tasks to return, 1 to {@value #MAX_LIMIT}
 * @param afterCreatedAt with {@code afterTaskId}, the cursor: only tasks after this one in
 *     (createdAt, taskId) order; null for the first page
 * @param afterTaskId the cursor's task id, or null
 */
public record TaskQuery(TaskStatus status, String workflow, int limit, Instant afterCreatedAt, TaskId afterTaskId) {

    /** Default page size: 100. */
    public static final int DEFAULT_LIMIT = 100;
    /** Largest page: 10,000. */
    public static final int MAX_LIMIT = 10_000;

    /**
     * @throws IllegalArgumentException if {@code limit} is out of range or only half a cursor is given
     */
    public TaskQuery {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be 1 to " + MAX_LIMIT + ", was " + limit);
        }
        if ((afterCreatedAt == null) != (afterTaskId == null)) {
            throw new IllegalArgumentException("a cursor needs both afterCreatedAt and afterTaskId");
        }
    }

    /** Every task, the first {@value #DEFAULT_LIMIT}. */
    public static TaskQuery all() {
        return new TaskQuery(null, null, DEFAULT_LIMIT, null, null);
    }

    /**
     * Only tasks in this state.
     *
     * @throws NullPointerException if null
     */
    public TaskQuery withStatus(TaskStatus status) {
        return new TaskQuery(Objects.requireNonNull(status, "status must not be null"), workflow, limit,
                afterCreatedAt, afterTaskId);
    }

    /**
     * Only tasks of this workflow (every version).
     *
     * @throws NullPointerException if null
     */
    public TaskQuery withWorkflow(String workflow) {
        return new TaskQuery(status, Objects.requireNonNull(workflow, "workflow must not be null"), limit,
                afterCreatedAt, afterTaskId);
    }

    /**
     * At most this many tasks.
     *
     * @throws IllegalArgumentException if out of range
     */
    public TaskQuery withLimit(int limit) {
        return new TaskQuery(status, workflow, limit, afterCreatedAt, afterTaskId);
    }

    /**
     * The next page: tasks after {@code last}, the last task of the previous page.
     *
     * @throws NullPointerException if null
     */
    public TaskQuery after(TaskInfo last) {
        Objects.requireNonNull(last, "last must not be null");
        return new TaskQuery(status, workflow, limit, last.createdAt(), last.taskId());
    }

    /** Whether {@code info} matches the filters and comes after the cursor (for stores that filter in memory). */
    public boolean matches(TaskInfo info) {
        if (status != null && info.status() != status) {
            return false;
        }
        if (workflow != null && !workflow.equals(info.workflow())) {
            return false;
        }
        if (afterCreatedAt == null) {
            return true;
        }
        int c = info.createdAt().compareTo(afterCreatedAt);
        return c > 0 || (c == 0 && info.taskId().value().compareTo(afterTaskId.value()) > 0);
    }
}
