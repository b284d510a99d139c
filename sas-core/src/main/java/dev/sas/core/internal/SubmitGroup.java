package dev.sas.core.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.SubmitResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group commit for single submits: threads that submit at the same time share one store
 * transaction ({@link StateStore#submitAll}), and each returns once its own task is durable. No
 * thread of its own and no added wait: a submitter queues its task and takes the commit lock; the
 * holder commits everything queued so far, so while one commit is in flight the next group
 * gathers behind it. One thread alone commits one task at a time, as before.
 *
 * <p>A group the store refuses as a whole is retried task by task, so one bad task (an input too
 * long for its column) never fails another's submit; when the store itself fails, every submitter
 * of the group hears it, as each single submit would have.
 * Thread-safe.
 */
public final class SubmitGroup {
    /** Most tasks one shared commit carries. */
    public static final int MAX_GROUP = 500;

    private final StateStore store;
    private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
    private final ReentrantLock committing = new ReentrantLock();

    private record Pending(NewTask task, TaskEvent received, CompletableFuture<SubmitResult> result) {
    }

    public SubmitGroup(StateStore store) {
        this.store = store;
    }

    /**
     * Makes {@code task} durable, in a transaction shared with other threads submitting now.
     *
     * @return the store's result for this task, as {@link StateStore#submit} would give it
     * @throws RuntimeException what the store threw for this task ({@code StateStoreException},
     *     {@code IllegalArgumentException}); the task may then not exist
     */
    public SubmitResult submit(NewTask task, TaskEvent received) {
        Pending mine = new Pending(task, received, new CompletableFuture<>());
        queue.add(mine);
        committing.lock();
        try {
            while (!mine.result.isDone()) {
                commitQueued();
            }
        } finally {
            committing.unlock();
        }
        try {
            return mine.result.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        } catch (InterruptedException e) {
            // Not reachable: the result is complete before get() is called.
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Commits what is queued (at most {@link #MAX_GROUP} tasks); called with the lock held. */
    private void commitQueued() {
        List<Pending> group = new ArrayList<>();
        for (Pending p; group.size() < MAX_GROUP && (p = queue.poll()) != null; ) {
            group.add(p);
        }
        if (group.isEmpty()) {
            return;
        }
        if (group.size() == 1) {
            commitAlone(group.get(0));
            return;
        }
        List<NewTask> tasks = new ArrayList<>(group.size());
        List<TaskEvent> events = new ArrayList<>(group.size());
        for (Pending p : group) {
            tasks.add(p.task);
            events.add(p.received);
        }
        List<SubmitResult> results;
        try {
            results = store.submitAll(tasks, events, null);
        } catch (RuntimeException e) {
            retryAlone(group, e);
            return;
        } catch (Throwable e) {
            group.forEach(p -> p.result.completeExceptionally(e));
            return;
        }
        for (int i = 0; i < group.size(); i++) {
            group.get(i).result.complete(results.get(i));
        }
    }

    /**
     * Nothing of the group was written. It may be one task's value the store refuses (an input
     * too long for its column): each task gets its own try, so only the bad one fails. Two failures
     * in a row mean the store itself fails: the rest hear the group's error at once instead of
     * each waiting out its own attempt against a store that is down.
     */
    private void retryAlone(List<Pending> group, RuntimeException groupError) {
        int failuresInARow = 0;
        for (Pending p : group) {
            if (failuresInARow >= 2) {
                p.result.completeExceptionally(groupError);
                continue;
            }
            commitAlone(p);
            failuresInARow = p.result.isCompletedExceptionally() ? failuresInARow + 1 : 0;
        }
    }

    private void commitAlone(Pending p) {
        try {
            p.result.complete(store.submit(p.task, p.received, null));
        } catch (Throwable e) {
            p.result.completeExceptionally(e);
        }
    }
}
