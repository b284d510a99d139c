package dev.sas.core.internal;

import dev.sas.core.StatusChannel;
import dev.sas.core.StatusUpdate;
import dev.sas.core.StateStoreException;
import dev.sas.core.spi.StatusOutbox;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes one status channel from the store's outbox: while it holds the channel's lease, reads the
 * oldest pending messages, hands them to the channel's handler, and acknowledges them once the
 * handler returned (so a crash in between delivers them again, with the same ids). A handler that
 * throws gets the same batch again after a backoff (1 s doubling to 30 s); a listener that throws
 * is counted and not repeated. Waits between looks per {@link AdaptivePoll}, or until
 * {@link #wake()}. Thread-safe; runs on its own thread {@code sas-status-<channel>} once started.
 */
public final class StatusPump {
    private static final Logger log = LoggerFactory.getLogger(StatusPump.class);
    static final long FIRST_BACKOFF_MS = 1_000;
    static final long MAX_BACKOFF_MS = 30_000;
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final StatusChannel channel;
    private final StatusOutbox outbox;
    private final DatabaseClock clock;
    private final String consumerId;
    private final Metrics metrics;
    private final AdaptivePoll poll;
    private final Semaphore wake = new Semaphore(0);
    private volatile boolean running;
    private Thread thread;
    private boolean holding;
    private Instant renewAt = Instant.MIN;
    private long nextWarnNanos = System.nanoTime();

    /**
     * @param poll how long to wait between looks; the pump's thread alone uses it
     */
    public StatusPump(StatusChannel channel, StatusOutbox outbox, DatabaseClock clock, String consumerId, Metrics metrics,
            AdaptivePoll poll) {
        this.channel = channel;
        this.outbox = outbox;
        this.clock = clock;
        this.consumerId = consumerId;
        this.metrics = metrics;
        this.poll = poll;
    }

    /** The channel's name. */
    public String channel() {
        return channel.name();
    }

    /** Registers the channel in the store, so submits naming it are accepted on every node. */
    public void register() {
        clock.ensureFresh();
        outbox.register(channel.name(), clock.instant());
    }

    /** Starts the pump's thread. */
    public synchronized void start() {
        if (thread != null) {
            return;
        }
        running = true;
        thread = new NamedThreadFactory("sas-status-" + channel.name(), false).newThread(this::loop);
        thread.start();
    }

    /** Makes the pump look at the outbox now (a transition for this channel committed, or a hint arrived). */
    public void wake() {
        if (wake.availablePermits() == 0) {
            wake.release();
        }
    }

    /**
     * Stops the thread, waiting up to {@code wait} for a delivery in progress to end (then interrupts
     * it), and gives up the lease so another node takes over at once. Idempotent.
     */
    public void stop(Duration wait) throws InterruptedException {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        wake();
        if (t != null) {
            t.join(Math.max(1, wait.toMillis()));
            if (t.isAlive()) {
                t.interrupt();
                t.join(1_000);
            }
        }
        try {
            outbox.release(channel.name(), consumerId);
        } catch (RuntimeException e) {
            log.warn("status channel {}: could not give up its lease ({}); another node takes over when it expires",
                    channel.name(), e.getMessage());
        }
    }

    /**
     * One look, on the calling thread (tests and manual driving): takes or renews the lease, then
     * delivers and acknowledges one batch.
     *
     * @return messages delivered, 0 if none was pending, -1 if another node holds the channel
     * @throws Exception what the handler threw (the batch stays pending)
     * @throws StateStoreException if the store failed
     */
    public int runOnce() throws Exception {
        clock.ensureFresh();
        Instant now = clock.instant();
        if (!holding || !now.isBefore(renewAt)) {
            boolean was = holding;
            holding = outbox.tryAcquire(channel.name(), consumerId, now, channel.leaseTime());
            renewAt = now.plus(channel.leaseTime().dividedBy(3));
            if (holding != was) {
                log.info("status channel {}: {} {} consuming it", channel.name(), consumerId,
                        holding ? "is now" : "stopped");
            }
            if (!holding) {
                return -1;
            }
        }
        List<StatusUpdate> batch = outbox.pending(channel.name(), channel.batchSize());
        if (batch.isEmpty()) {
            return 0;
        }
        deliver(batch);
        List<Long> ids = new ArrayList<>(batch.size());
        for (StatusUpdate m : batch) {
            ids.add(m.deliveryId());
        }
        boolean still = outbox.acknowledge(channel.name(), consumerId, ids, clock.instant());
        metrics.statusUpdatesDelivered.add(batch.size());
        if (!still) {
            holding = false;
            log.info("status channel {}: {} lost its lease; another node consumes it", channel.name(), consumerId);
        }
        return batch.size();
    }

    private void deliver(List<StatusUpdate> batch) throws Exception {
        if (channel.redeliverOnFailure()) {
            channel.handler().deliver(batch);
            return;
        }
        for (StatusUpdate m : batch) {
            try {
                channel.handler().deliver(List.of(m));
            } catch (Throwable e) {
                metrics.listenerFailures.increment();
                TaskLog.run(m.taskId(), m.event().stepIndex(), () -> log.warn("task {}: status channel {} listener"
                        + " threw on {}; the task is not affected", m.taskId(), channel.name(), m.status(), e));
            }
        }
    }

    /**
     * Delivers one batch of each pump on the calling thread (for manual driving).
     *
     * @return how many messages were delivered
     * @throws dev.sas.core.SasException if a channel's handler threw (its batch stays pending)
     */
    public static int runEachOnce(Iterable<StatusPump> pumps) {
        int delivered = 0;
        for (StatusPump pump : pumps) {
            try {
                delivered += Math.max(0, pump.runOnce());
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new dev.sas.core.SasException("status channel " + pump.channel() + ": its handler threw; the"
                        + " batch stays pending: " + e, e);
            }
        }
        return delivered;
    }

    private void loop() {
        long backoffMs = FIRST_BACKOFF_MS;
        while (running) {
            long waitMs;
            try {
                int n = runOnce();
                backoffMs = FIRST_BACKOFF_MS;
                if (n == channel.batchSize()) {
                    continue;
                }
                waitMs = n < 0 ? Math.max(1, channel.leaseTime().toMillis() / 3) : poll.nextWaitMillis(n > 0);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Throwable e) {
                // Contained, Errors too: the batch stays in the outbox and is tried again.
                metrics.statusUpdateFailures.increment();
                if (e instanceof StateStoreException) {
                    metrics.storeFailures.increment();
                }
                warn(e, backoffMs);
                waitMs = backoffMs;
                backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
            }
            try {
                if (wake.tryAcquire(waitMs, TimeUnit.MILLISECONDS)) {
                    wake.drainPermits();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void warn(Throwable e, long backoffMs) {
        long now = System.nanoTime();
        if (now - nextWarnNanos < 0) {
            log.debug("status channel {}: delivery failed again; retrying in {} ms", channel.name(), backoffMs, e);
            return;
        }
        nextWarnNanos = now + WARN_EVERY_NANOS;
        if (e instanceof StateStoreException) {
            log.warn("status channel {}: the store failed ({}); its messages stay pending, retrying in {} ms",
                    channel.name(), e.getMessage(), backoffMs);
        } else {
            log.warn("status channel {}: its handler failed; the batch stays pending and is delivered again in {} ms"
                    + " ({} failures so far)", channel.name(), backoffMs, metrics.statusUpdateFailures.sum(), e);
        }
    }
}
