package dev.sas.core.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.SubmitResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Group commit for single submits: threads that submit at the same time share one store
 * transaction ({@link StateStore#submitAll}), and each returns once its own task is durable. No
 * thread of its own and no added wait: a submitter queues its task, and the one submitter that
 * leads commits everything queued so far, so while one commit is in flight the next group gathers
 * behind it. One thread alone commits one task at a time, as before.
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
    /** True while one submitter commits for the others. */
    private final AtomicBoolean leading = new AtomicBoolean();

    /** One submitter's task; its fields are guarded by the object's monitor, on which the submitter waits. */
    private static final class Pending {
        final NewTask task;
        final TaskEvent received;
        private SubmitResult result;
        private Throwable error;
        private boolean done;
        /** Set when the leader before asks this submitter to lead next. */
        private boolean mayLead;

        Pending(NewTask task, TaskEvent received) {
            this.task = task;
            this.received = received;
        }

        synchronized void complete(SubmitResult r) {
            result = r;
            done = true;
            notifyAll();
        }

        synchronized void fail(Throwable e) {
            error = e;
            done = true;
            notifyAll();
        }

        synchronized boolean done() {
            return done;
        }

        synchronized boolean failed() {
            return done && error != null;
        }

        synchronized void offerLead() {
            mayLead = true;
            notifyAll();
        }

        /**
         * Waits until the task is committed or this submitter is asked to lead.
         *
         * @return whether the thread was interrupted meanwhile (a submit is not interruptible: its
         *     task may be committing)
         */
        synchronized boolean awaitDoneOrLead() {
            boolean interrupted = false;
            while (!done && !mayLead) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            mayLead = false;
            return interrupted;
        }

        synchronized SubmitResult get() {
            if (error instanceof RuntimeException re) {
                throw re;
            }
            if (error instanceof Error err) {
                throw err;
            }
            if (error != null) {
                throw new IllegalStateException(error);
            }
            return result;
        }
    }

    public SubmitGroup(StateStore store) {
        this.store = store;
    }

    /**
     * Makes {@code task} durable, in a transaction shared with other threads submitting now.
     *
     * <p>One submitter at a time leads: it commits everything queued and, when it is done, asks
     * the oldest submitter still queued to lead next. The others wait until their own task is
     * committed; none of them takes a lock just to find its task already committed (a lock here
     * made every finished submitter queue for it in turn, and the groups stayed small).
     *
     * @return the store's result for this task, as {@link StateStore#submit} would give it
     * @throws RuntimeException what the store threw for this task ({@code StateStoreException},
     *     {@code IllegalArgumentException}); the task may then not exist
     */
    public SubmitResult submit(NewTask task, TaskEvent received) {
        Pending mine = new Pending(task, received);
        queue.add(mine);
        boolean interrupted = false;
        while (!mine.done()) {
            if (leading.compareAndSet(false, true)) {
                try {
                    commitQueued();
                } finally {
                    leading.set(false);
                    // Whoever queued while this group committed leads next; a submitter that queued
                    // after this check finds no leader and leads itself.
                    Pending next = queue.peek();
                    if (next != null) {
                        next.offerLead();
                    }
                }
            } else {
                interrupted |= mine.awaitDoneOrLead();
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return mine.get();
    }

    /** Commits what is queued (at most {@link #MAX_GROUP} tasks); called by the leader. */
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
            group.forEach(p -> p.fail(e));
            return;
        }
        for (int i = 0; i < group.size(); i++) {
            group.get(i).complete(results.get(i));
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
                p.fail(groupError);
                continue;
            }
            commitAlone(p);
            failuresInARow = p.failed() ? failuresInARow + 1 : 0;
        }
    }

    private void commitAlone(Pending p) {
        try {
            p.complete(store.submit(p.task, p.received, null));
        } catch (Throwable e) {
            p.fail(e);
        }
    }
}
