package dev.sas.core.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskId;
import dev.sas.core.spi.StoreSignals;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Threads waiting for tasks to finish ({@code TaskHandle.await}) and what wakes them: the node's own
 * runtime when it records a task's end, and the store's {@link StoreSignals.Topic#TASK_FINISHED}
 * hints from every node (PostgreSQL). A wake-up only makes the waiter read the store again; it never
 * decides anything. Thread-safe.
 */
public final class Waiters {
    private static final Logger log = LoggerFactory.getLogger(Waiters.class);

    private final StoreSignals signals;
    private final Map<TaskId, Set<Waiter>> waiting = new ConcurrentHashMap<>();
    private volatile boolean subscribed;

    /** @param signals the store's hints, or null if it pushes none */
    public Waiters(StoreSignals signals) {
        this.signals = signals;
    }

    /**
     * Registers the calling thread as waiting for {@code taskId}. Where the store pushes hints, asks
     * it to signal the task's end (one small write); if that fails the waiter just polls.
     */
    public Waiter register(TaskId taskId) {
        Waiter w = new Waiter(taskId, Thread.currentThread());
        waiting.computeIfAbsent(taskId, k -> ConcurrentHashMap.newKeySet()).add(w);
        if (signals != null) {
            subscribe();
        }
        if (signals != null && signals.connected()) {
            try {
                signals.watch(taskId);
                w.pushed = true;
            } catch (StateStoreException e) {
                log.debug("task {}: could not ask the store to signal its end; polling instead", taskId, e);
            }
        }
        return w;
    }

    private void subscribe() {
        if (subscribed) {
            return;
        }
        synchronized (this) {
            if (!subscribed) {
                signals.subscribe(StoreSignals.Topic.TASK_FINISHED, payload -> {
                    if (payload == null) {
                        waiting.values().forEach(set -> set.forEach(Waiter::wake));
                    } else {
                        finished(TaskId.of(payload));
                    }
                });
                subscribed = true;
            }
        }
    }

    /** Wakes the threads waiting for {@code taskId}: it reached a terminal state (or may have). */
    public void finished(TaskId taskId) {
        Set<Waiter> set = waiting.get(taskId);
        if (set != null) {
            set.forEach(Waiter::wake);
        }
    }

    /** One waiting thread. Used by that thread, woken by any. */
    public final class Waiter implements AutoCloseable {
        private final TaskId taskId;
        private final Thread thread;
        private volatile boolean woken;
        private volatile boolean pushed;

        private Waiter(TaskId taskId, Thread thread) {
            this.taskId = taskId;
            this.thread = thread;
        }

        /** True if the store will signal the task's end from any node: polling is then only the fallback. */
        public boolean pushed() {
            return pushed;
        }

        void wake() {
            woken = true;
            LockSupport.unpark(thread);
        }

        /** Parks the calling thread until woken or {@code nanos} passed (or interrupted). */
        public void await(long nanos) {
            long deadline = System.nanoTime() + nanos;
            while (!woken && !Thread.currentThread().isInterrupted()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                LockSupport.parkNanos(this, left);
            }
            woken = false;
        }

        @Override
        public void close() {
            waiting.computeIfPresent(taskId, (k, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
