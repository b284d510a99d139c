package dev.sas.micrometer;

import dev.sas.core.TaskStatus;
import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.StateStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's gauges, read at most once per refresh interval on the thread that reads a gauge (a
 * scrape), so that a registry polling every few seconds does not count the task table each time.
 * A failed read keeps the last values and is logged. Thread-safe.
 */
final class StoreGauges {
    private static final Logger log = LoggerFactory.getLogger(StoreGauges.class);
    /** How many workflow versions' backlogs the oldest-due gauge reads at most. */
    private static final int BACKLOG_LIMIT = 1_000;

    private final StateStore store;
    private final Clock clock;
    private final LongSupplier skewMillis;
    private final long refreshNanos;
    private long readAtNanos;
    private boolean read;
    private Map<TaskStatus, Long> counts = Map.of();
    private double oldestDueAgeMillis;

    StoreGauges(StateStore store, Clock clock, LongSupplier skewMillis, Duration refresh) {
        this.store = store;
        this.clock = clock;
        this.skewMillis = skewMillis;
        this.refreshNanos = refresh.toNanos();
    }

    synchronized double count(TaskStatus status) {
        refresh();
        return counts.getOrDefault(status, 0L);
    }

    synchronized double oldestDueAgeMillis() {
        refresh();
        return oldestDueAgeMillis;
    }

    private void refresh() {
        long nanos = System.nanoTime();
        if (read && nanos - readAtNanos < refreshNanos) {
            return;
        }
        read = true;
        readAtNanos = nanos;
        try {
            Map<TaskStatus, Long> c = new EnumMap<>(TaskStatus.class);
            c.putAll(store.countByStatus());
            counts = c;
            Instant now = clock.instant().plusMillis(skewMillis.getAsLong());
            List<DueBacklog> due = store.deployments().map(d -> d.dueBacklog(now, BACKLOG_LIMIT)).orElse(List.of());
            oldestDueAgeMillis = due.stream().map(DueBacklog::dueSince).min(Instant::compareTo)
                    .map(since -> (double) Math.max(0, Duration.between(since, now).toMillis())).orElse(0.0);
        } catch (RuntimeException e) {
            log.warn("SAS metrics: reading the store's task counts failed ({}); keeping the last values", e.toString());
        }
    }
}
