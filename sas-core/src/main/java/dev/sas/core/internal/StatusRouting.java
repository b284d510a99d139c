package dev.sas.core.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.spi.StatusOutbox;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a runtime does with the status channel of a transition it recorded: the store already wrote
 * the messages to the channel's outbox, so this only wakes the channel's pump when this runtime
 * consumes it, and counts and logs messages for a channel no node has registered (they wait in the
 * outbox until one does). Thread-safe.
 */
public final class StatusRouting {
    private static final Logger log = LoggerFactory.getLogger(StatusRouting.class);
    private static final long REFRESH_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Map<String, StatusPump> local;
    private final StatusOutbox outbox;
    private final Metrics metrics;
    private final Set<String> registered = ConcurrentHashMap.newKeySet();
    private final AtomicLong nextRefreshNanos = new AtomicLong(System.nanoTime());
    private final AtomicLong nextWarnNanos = new AtomicLong(System.nanoTime());

    /**
     * @param local the pumps of the channels this runtime consumes, by name
     * @param outbox the store's outbox, or null if it keeps none
     */
    public StatusRouting(Map<String, StatusPump> local, StatusOutbox outbox, Metrics metrics) {
        this.local = Map.copyOf(local);
        this.outbox = outbox;
        this.metrics = metrics;
    }

    /** True if this runtime consumes {@code channel} itself. */
    public boolean isLocal(String channel) {
        return local.containsKey(channel);
    }

    /**
     * A transition of a task with this status channel committed: wakes the channel's pump if it is
     * here. Fast; never reads the store.
     *
     * @return true if the channel is known to be registered; false if {@link #checkUnknown} should run
     */
    public boolean committed(String channel) {
        StatusPump pump = local.get(channel);
        if (pump != null) {
            pump.wake();
            return true;
        }
        return registered.contains(channel);
    }

    /**
     * Looks {@code channel} up in the store's registry (at most every 10 s while it is missing) and,
     * if no node registered it, counts {@code events} and warns (at most every 10 s). Call it off the
     * scheduler's threads.
     */
    public void checkUnknown(String channel, List<TaskEvent> events) {
        if (registered.contains(channel) || local.containsKey(channel)) {
            return;
        }
        long now = System.nanoTime();
        long next = nextRefreshNanos.get();
        if (outbox != null && now - next >= 0 && nextRefreshNanos.compareAndSet(next, now + REFRESH_EVERY_NANOS)) {
            try {
                registered.addAll(outbox.channels());
            } catch (RuntimeException e) {
                metrics.storeFailures.increment();
                log.debug("could not read the registered status channels", e);
            }
            if (registered.contains(channel)) {
                return;
            }
        }
        metrics.statusChannelUnknown.add(events.size());
        long warn = nextWarnNanos.get();
        if (now - warn >= 0 && nextWarnNanos.compareAndSet(warn, now + WARN_EVERY_NANOS)) {
            TaskEvent first = events.get(0);
            log.warn("task {}: {} event(s) for status channel '{}', which no runtime or StatusConsumer has registered;"
                    + " they wait in the store's outbox until one registers it ({} such events so far)",
                    first.taskId(), events.size(), channel, metrics.statusChannelUnknown.sum());
        }
    }
}
