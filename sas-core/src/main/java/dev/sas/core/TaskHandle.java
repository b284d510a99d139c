package dev.sas.core;

import dev.sas.core.internal.Waiters;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A submitted task, as {@link SasClient#submit} returns it: wait for its end with
 * {@link #await(Duration)}, look at it with {@link #info()}, cancel it. Works on any node that
 * reaches the store: it reads the store, so the task may run anywhere. Holds no resources;
 * thread-safe.
 */
public final class TaskHandle {
    private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long MAX_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long MAX_PAUSE_PUSHED_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final SasClient client;
    private final TaskId taskId;
    private final boolean created;

    TaskHandle(SasClient client, TaskId taskId, boolean created) {
        this.client = client;
        this.taskId = taskId;
        this.created = created;
    }

    /** The task's id. */
    public TaskId id() {
        return taskId;
    }

    /**
     * False when the submit found a task with the same workflow and business key and returned
     * that one instead of creating a new task.
     */
    public boolean created() {
        return created;
    }

    /**
     * The task as it is now, with its steps.
     *
     * @throws TaskNotFoundException if it no longer exists (purged after its retention period)
     * @throws StateStoreException if the store failed
     */
    public TaskInfo info() {
        return client.find(taskId).orElseThrow(() -> new TaskNotFoundException(taskId));
    }

    /**
     * Waits until the task is in a terminal state (PROCESSED, ERROR, COMPENSATED,
     * COMPENSATION_FAILED or CANCELLED) and returns it, whichever node runs it. Returns as soon as
     * this node's runtime records the task's end, or, on a store that pushes hints across nodes
     * (PostgreSQL), as soon as the hint of any node's commit arrives; until then it reads the store
     * now and then (after a couple of milliseconds, backing off to 200 ms, or to 1 s where the
     * store pushes), so it also sees tasks finished while hints were lost.
     *
     * @param timeout how long to wait at most
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws TaskTimeoutException if the task is not terminal in time (it goes on running)
     * @throws TaskNotFoundException if the task does not exist
     * @throws SasException if the waiting thread is interrupted (its interrupt flag is kept)
     * @throws StateStoreException if the store failed
     */
    public TaskResult await(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, was " + timeout);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        TaskInfo info = info();
        if (info.status().isTerminal()) {
            return new TaskResult(info);
        }
        try (Waiters.Waiter waiter = client.waiters().register(taskId)) {
            long maxPause = waiter.pushed() ? MAX_PAUSE_PUSHED_NANOS : MAX_PAUSE_NANOS;
            long pause = FIRST_PAUSE_NANOS;
            while (true) {
                // read again after registering: the task may have ended between the first read and then
                info = info();
                if (info.status().isTerminal()) {
                    return new TaskResult(info);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TaskTimeoutException(taskId, info.status(), timeout);
                }
                waiter.await(Math.min(pause, left));
                if (Thread.currentThread().isInterrupted()) {
                    throw new SasException("interrupted while waiting for task " + taskId + " (it was "
                            + info.status() + "); the task goes on running");
                }
                pause = Math.min(pause * 2, maxPause);
            }
        }
    }

    /**
     * Asks to cancel the task; see {@link OperationsClient#cancel(TaskId)}.
     *
     * @return true if the cancel was recorded and will be carried out; false if the task had
     *     already finished or a cancel was already requested
     * @throws TaskNotFoundException if the task does not exist
     */
    public boolean cancel() {
        return client.operations().cancel(taskId);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TaskHandle h && h.taskId.equals(taskId) && h.client == client;
    }

    @Override
    public int hashCode() {
        return taskId.hashCode();
    }

    @Override
    public String toString() {
        return "TaskHandle{" + taskId + '}';
    }
}
