package dev.sas.core.internal;

import dev.sas.core.Alert;
import dev.sas.core.AlertSink;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers committed events to listeners, and alerts to the sink, on one thread
 * ({@code sas-events}) so that order is kept; inline when no thread was started. Status channels are
 * not delivered here: the store wrote their messages to its outbox with the transition, and the
 * channel's pump delivers them from there ({@link StatusRouting} only wakes it), so a message is
 * never delivered twice by two paths.
 *
 * <p>Bounded: at most {@code capacity} events and alerts wait for the event thread. When a slow
 * listener lets the queue fill up, new events are dropped for listeners (counted in
 * {@code eventsDropped}, a WARN at most every {@value #DROP_WARN_EVERY_SECONDS} s) instead of
 * blocking the scheduler's and recorder's threads: events are notifications, the event log in the
 * store keeps every one. After {@link #close} nothing more is delivered. Thread-safe.
 */
public final class EventBus {
    private static final Logger log = LoggerFactory.getLogger(EventBus.class);
    private static final long DROP_WARN_EVERY_SECONDS = 10;

    private final List<TaskListener> listeners;
    private final StatusRouting statusRouting;
    private final Consumer<TaskEvent> finished;
    private final AlertSink alertSink;
    private final Metrics metrics;
    private final int capacity;
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicLong nextDropWarnNanos = new AtomicLong(System.nanoTime());
    private volatile ExecutorService executor;
    private volatile boolean closed;

    /**
     * A bus delivering inline until {@link #start} is called, queueing at most {@code capacity} events after.
     *
     * @param statusRouting what to do with the status channel of a recorded transition
     * @param finished told at once (on the publishing thread) of every task that reached a terminal
     *     state (its terminal event), so waiting handles on this node return without polling and the
     *     parent of a child task is delivered at once, and of every task that came to rest awaiting a
     *     reply ({@link TaskEvent.Type#COMPLETION_AWAITED}), so a join or a fan-out lane waiting for that
     *     rest goes on; must be quick
     */
    public EventBus(List<TaskListener> listeners, StatusRouting statusRouting, Consumer<TaskEvent> finished,
            AlertSink alertSink, Metrics metrics, int capacity) {
        this.listeners = List.copyOf(listeners);
        this.statusRouting = statusRouting;
        this.finished = finished;
        this.alertSink = alertSink;
        this.metrics = metrics;
        this.capacity = capacity;
    }

    /** Deliver on this executor from now on. */
    public void start(ExecutorService executor) {
        this.executor = executor;
    }

    /**
     * Delivers events recorded (committed) for one task to the listeners; wakes the pump of its reply
     * channel if it is consumed here, and tells waiting handles when the task finished.
     */
    public void publish(List<TaskEvent> events, String statusChannel) {
        if (events.isEmpty()) {
            return;
        }
        for (TaskEvent e : events) {
            if (isTerminal(e.type()) || e.type() == TaskEvent.Type.COMPLETION_AWAITED) {
                try {
                    finished.accept(e);
                } catch (RuntimeException ex) {
                    metrics.internalErrors.increment();
                    log.error("task {}: waking the handles that wait for it failed", e.taskId(), ex);
                }
            }
        }
        boolean unknownChannel = statusChannel != null && !statusRouting.committed(statusChannel);
        if (listeners.isEmpty() && !unknownChannel) {
            return;
        }
        run(events.size(), () -> {
            if (unknownChannel) {
                statusRouting.checkUnknown(statusChannel, events);
            }
            for (TaskEvent e : events) {
                for (TaskListener l : listeners) {
                    deliver(l, e);
                }
            }
        });
    }

    private static boolean isTerminal(TaskEvent.Type type) {
        return switch (type) {
            case PROCESSED, ERROR, COMPENSATED, COMPENSATION_FAILED, CANCELLED -> true;
            default -> false;
        };
    }

    /** Raises an alert. */
    public void alert(Alert alert) {
        run(1, () -> {
            if (closed) {
                return;
            }
            // the alert line (and whatever a custom sink logs) carries the task, as a step's lines do
            try (TaskLog.Scope ignored = TaskLog.of(alert.taskId(), alert.workflow(), null, 0)) {
                alertSink.alert(alert);
            } catch (Throwable e) {
                metrics.listenerFailures.increment();
                log.warn("task {} step {}: alert sink threw; alert was: {}", alert.taskId(), alert.stepName(),
                        alert.message(), e);
            }
        });
    }

    private void deliver(TaskListener l, TaskEvent e) {
        if (closed) {
            return;
        }
        try {
            l.onEvent(e);
        } catch (Throwable ex) {
            metrics.listenerFailures.increment();
            log.warn("task {} step {}: listener {} threw on {}; the task is not affected", e.taskId(), e.stepName(),
                    l, e.type(), ex);
        }
    }

    /** Runs {@code r}, which delivers {@code n} events or alerts, on the event thread if there is room. */
    private void run(int n, Runnable r) {
        if (closed) {
            dropped(n, "the runtime is closed");
            return;
        }
        ExecutorService ex = executor;
        if (ex == null) {
            r.run();
            return;
        }
        if (queued.addAndGet(n) > capacity) {
            queued.addAndGet(-n);
            dropped(n, "the event queue is full (" + capacity + " events; a listener is slow)");
            return;
        }
        try {
            ex.execute(new Delivery(n, r));
        } catch (RejectedExecutionException shutDown) {
            queued.addAndGet(-n);
            dropped(n, "the runtime is closing");
        }
    }

    /** A queued delivery, knowing how many events it holds. */
    private final class Delivery implements Runnable {
        private final int n;
        private final Runnable r;

        Delivery(int n, Runnable r) {
            this.n = n;
            this.r = r;
        }

        @Override
        public void run() {
            queued.addAndGet(-n);
            if (closed) {
                dropped(n, "the runtime closed");
                return;
            }
            try {
                r.run();
            } catch (Throwable e) {
                metrics.internalErrors.increment();
                log.error("unexpected error delivering events; the event thread goes on", e);
            }
        }
    }

    private void dropped(int n, String why) {
        metrics.eventsDropped.add(n);
        long now = System.nanoTime();
        long next = nextDropWarnNanos.get();
        if (now - next >= 0 && nextDropWarnNanos.compareAndSet(next,
                now + TimeUnit.SECONDS.toNanos(DROP_WARN_EVERY_SECONDS))) {
            log.warn("{} event(s) not delivered to listeners: {}; {} dropped so far. The event log in the store "
                    + "has every event.", n, why, metrics.eventsDropped.sum());
        }
    }

    /**
     * Stops delivering: lets the event thread deliver what is queued for up to {@code wait}, then
     * discards the rest (counted as dropped) and interrupts a listener still running. Once this
     * returns, no listener, status channel or alert sink is called again by this bus (a listener that
     * ignores the interrupt may still be inside its call). Shuts down the executor given to
     * {@link #start}. Idempotent.
     *
     * @return true if the event thread has ended
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean close(Duration wait) throws InterruptedException {
        ExecutorService ex = executor;
        if (ex == null) {
            closed = true;
            return true;
        }
        ex.shutdown();
        boolean done = ex.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS);
        closed = true;
        if (!done) {
            int left = 0;
            for (Runnable r : ex.shutdownNow()) {
                left += r instanceof Delivery d ? d.n : 1;
            }
            if (left > 0) {
                queued.addAndGet(-left);
                dropped(left, "the runtime closed before a slow listener caught up");
            }
            done = ex.awaitTermination(1, TimeUnit.SECONDS);
            if (!done) {
                log.warn("the event thread is still in a listener that ignores interrupts; nothing more is delivered");
            }
        }
        return done;
    }
}
