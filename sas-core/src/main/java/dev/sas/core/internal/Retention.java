package dev.sas.core.internal;

import dev.sas.core.spi.StateStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Retention role: on the node whose {@link Supervisor} holds the lease, deletes final tasks
 * past their retention in bounded batches, on its own thread {@code sas-retention}, so a large
 * backlog never delays the recovery of expired claims. A full batch is followed by the next one
 * as soon as the rate allows ({@code batchSize / maxDeletesPerSecond} seconds from the start of
 * the previous one); a batch that is not full means the backlog is gone, and the next check is
 * one interval later. Thread-safe.
 */
public final class Retention {
    private static final Logger log = LoggerFactory.getLogger(Retention.class);

    private final StateStore store;
    private final Clock clock;
    private final BooleanSupplier leader;
    private final Duration retention;
    private final int batchSize;
    private final Duration interval;
    /** Shortest time from the start of one batch to the start of the next, from the rate. */
    private final long minBatchMillis;
    private final String instanceId;
    /** Not guarded by {@code this}, which a batch in progress holds: {@link #stop} must not wait for it. */
    private volatile ScheduledExecutorService executor;
    private long backlogDeleted;

    /**
     * A retention role; call {@link #runOnce()} by hand or {@link #start()} its thread.
     *
     * @param leader whether this node holds the supervisor lease now
     */
    public Retention(StateStore store, Clock clock, BooleanSupplier leader, Duration retention, int batchSize,
            int maxDeletesPerSecond, Duration interval, String instanceId) {
        this.store = store;
        this.clock = clock;
        this.leader = leader;
        this.retention = retention;
        this.batchSize = batchSize;
        this.interval = interval;
        this.minBatchMillis = (long) Math.ceil(batchSize * 1000.0 / maxDeletesPerSecond);
        this.instanceId = instanceId;
    }

    /**
     * Deletes one batch of final tasks last updated before {@code now - retention}, if this node
     * holds the supervisor lease.
     *
     * @return how many tasks were deleted
     */
    public synchronized int runOnce() {
        if (!leader.getAsBoolean()) {
            return 0;
        }
        Instant cutoff = clock.instant().minus(retention);
        int deleted = store.purge(cutoff, batchSize);
        if (deleted > 0) {
            log.debug("instance {}: purged {} final tasks last updated before {}", instanceId, deleted, cutoff);
        }
        return deleted;
    }

    /** Starts the {@code sas-retention} thread; its first check is one interval from now. */
    public void start() {
        executor = Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("sas-retention", false));
        executor.schedule(this::pass, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Stops the thread, interrupting a batch in progress, and waits for it to end.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void stop(long timeoutMillis) throws InterruptedException {
        ScheduledExecutorService e = executor;
        if (e != null) {
            e.shutdownNow();
            if (!e.awaitTermination(timeoutMillis, TimeUnit.MILLISECONDS)) {
                log.warn("instance {}: retention batch still running after {} ms at shutdown", instanceId,
                        timeoutMillis);
            }
        }
    }

    /** One batch on the retention thread, then schedules the next: soon if the batch was full. */
    private void pass() {
        long started = clock.millis();
        long delay = interval.toMillis();
        try {
            int deleted = runOnce();
            if (deleted >= batchSize) {
                backlogDeleted += deleted;
                delay = Math.max(0, minBatchMillis - (clock.millis() - started));
            } else {
                if (backlogDeleted + deleted > 0) {
                    log.info("instance {}: purged {} final tasks older than {}", instanceId, backlogDeleted + deleted,
                            retention);
                }
                backlogDeleted = 0;
            }
        } catch (Throwable t) {
            log.warn("instance {}: retention batch failed; trying again in {}", instanceId, interval, t);
        }
        try {
            executor.schedule(this::pass, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException shutDown) {
            // stop() was called: nothing more to schedule.
        }
    }
}
