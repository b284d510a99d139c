package dev.sas.core;

import dev.sas.core.internal.NamedThreadFactory;
import java.util.concurrent.Semaphore;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread of a started runtime's {@link ChildRelay}: one daemon thread, {@code sas-relay}, that
 * delivers the hints of units that ended (or came to rest) on this node as soon as they are
 * published, so a join and the next element of a fan-out lane wait for no supervisor pass. Wakes
 * coalesce: one run handles every hint queued before it. A runner thread only queues a hint and
 * wakes this one; it never waits for a delivery. What this thread cannot deliver (a full hint
 * queue, a failure, a unit that ended on another node) is left to the supervisor passes' hints and
 * scans. Thread-safe.
 */
final class RelayLoop {
    private static final Logger log = LoggerFactory.getLogger(RelayLoop.class);

    private final IntSupplier deliver;
    private final Runnable afterDelivery;
    private final String instanceId;
    private final Semaphore wake = new Semaphore(0);
    private volatile boolean stopped;
    private Thread thread;

    /**
     * @param deliver delivers the queued hints; how many steps it completed
     * @param afterDelivery called after a run that completed a step (wakes the scheduler)
     */
    RelayLoop(IntSupplier deliver, Runnable afterDelivery, String instanceId) {
        this.deliver = deliver;
        this.afterDelivery = afterDelivery;
        this.instanceId = instanceId;
    }

    synchronized void start() {
        thread = new NamedThreadFactory("sas-relay", false).newThread(this::loop);
        thread.start();
    }

    /** A hint was queued: the thread runs soon (at most one wake is kept). Quick; from any thread. */
    void wake() {
        if (wake.availablePermits() == 0) {
            wake.release();
        }
    }

    private void loop() {
        while (!stopped) {
            try {
                wake.acquire();
                wake.drainPermits();
                if (deliver.getAsInt() > 0) {
                    afterDelivery.run();
                }
            } catch (InterruptedException e) {
                return;
            } catch (Throwable t) { // the thread goes on: the passes' fallback finds what this run dropped
                log.error("instance {}: relaying ended units failed; the supervisor's passes deliver them", instanceId,
                        t);
            }
        }
    }

    /** Whether the thread runs (started and not yet ended). */
    synchronized boolean running() {
        return thread != null && thread.isAlive();
    }

    /**
     * Stops the thread, waiting up to {@code millis} for a run in progress. Not by an interrupt: one
     * in the middle of a store call can close the store's file or connection (H2 closes its file).
     *
     * @throws InterruptedException if interrupted while waiting
     */
    synchronized void stop(long millis) throws InterruptedException {
        stopped = true;
        wake.release();
        if (thread != null) {
            thread.join(millis);
        }
    }
}
