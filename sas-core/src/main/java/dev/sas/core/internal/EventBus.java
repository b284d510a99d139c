package dev.sas.core.internal;

import dev.sas.core.Alert;
import dev.sas.core.AlertSink;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers committed events to listeners and reply channels, and alerts to the sink, on one
 * thread ({@code sas-events}) so that order is kept; inline when no thread was started.
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
    private final Map<String, TaskListener> replyChannels;
    private final AlertSink alertSink;
    private final Metrics metrics;
    private final int capacity;
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicLong nextDropWarnNanos = new AtomicLong(System.nanoTime());
    private volatile ExecutorService executor;
    private volatile boolean closed;

    /** A bus delivering inline until {@link #start} is called, queueing at most {@code capacity} events after. */
    public EventBus(List<TaskListener> listeners, Map<String, TaskListener> replyChannels, AlertSink alertSink,
            Metrics metrics, int capacity) {
        this.listeners = List.copyOf(listeners);
        this.replyChannels = Map.copyOf(replyChannels);
        this.alertSink = alertSink;
        this.metrics = metrics;
        this.capacity = capacity;
    }

    /** Deliver on this executor from now on. */
    public void start(ExecutorService executor) {
        this.executor = executor;
    }

    /** Whether anyone listens for events; when not, callers may skip building them. */
    public boolean hasListeners() {
        return !listeners.isEmpty() || !replyChannels.isEmpty();
    }

    /** Delivers events recorded for one task. */
    public void publish(List<TaskEvent> events, String replyTo) {
        if (events.isEmpty() || !hasListeners()) {
            return;
        }
        run(events.size(), () -> {
            TaskListener channel = replyTo == null ? null : replyChannels.get(replyTo);
            for (TaskEvent e : events) {
                for (TaskListener l : listeners) {
                    deliver(l, e);
                }
                if (channel != null) {
                    deliver(channel, e);
                }
            }
        });
    }

    /** Raises an alert. */
    public void alert(Alert alert) {
        run(1, () -> {
            if (closed) {
                return;
            }
            try {
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
     * returns, no listener, reply channel or alert sink is called again by this bus (a listener that
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
