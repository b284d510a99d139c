package dev.sas.core.internal;

import dev.sas.core.Alert;
import dev.sas.core.AlertSink;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskListener;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers committed events to listeners and reply channels, and alerts to the sink, on one
 * thread ({@code sas-events}) so that order is kept; inline when no thread was started.
 */
public final class EventBus {
    private static final Logger log = LoggerFactory.getLogger(EventBus.class);

    private final List<TaskListener> listeners;
    private final Map<String, TaskListener> replyChannels;
    private final AlertSink alertSink;
    private final Metrics metrics;
    private volatile ExecutorService executor;

    /** A bus delivering inline until {@link #start} is called. */
    public EventBus(List<TaskListener> listeners, Map<String, TaskListener> replyChannels, AlertSink alertSink,
            Metrics metrics) {
        this.listeners = List.copyOf(listeners);
        this.replyChannels = Map.copyOf(replyChannels);
        this.alertSink = alertSink;
        this.metrics = metrics;
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
        run(() -> {
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
        run(() -> {
            try {
                alertSink.alert(alert);
            } catch (RuntimeException e) {
                metrics.listenerFailures.increment();
                log.warn("task {} step {}: alert sink threw; alert was: {}", alert.taskId(), alert.stepName(),
                        alert.message(), e);
            }
        });
    }

    private void deliver(TaskListener l, TaskEvent e) {
        try {
            l.onEvent(e);
        } catch (RuntimeException ex) {
            metrics.listenerFailures.increment();
            log.warn("task {} step {}: listener {} threw on {}; the task is not affected", e.taskId(), e.stepName(),
                    l, e.type(), ex);
        }
    }

    private void run(Runnable r) {
        ExecutorService ex = executor;
        if (ex == null) {
            r.run();
            return;
        }
        try {
            ex.execute(r);
        } catch (RejectedExecutionException closed) {
            r.run();
        }
    }
}
