package dev.sas.core.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.WorkflowVersion;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's claiming half: counts the tasks this runtime holds, claims due tasks in batches
 * while there is room, and sleeps until a wake-up (a local submit, a store's hint) or the next
 * poll ({@link AdaptivePoll}: short while recently busy, the poll interval when idle). What happens to a claimed
 * task is the {@link AttemptRunner}'s business; it hands each task back through {@link #release()}.
 * Thread-safe.
 */
final class ClaimLoop {
    private static final Logger log = LoggerFactory.getLogger(ClaimLoop.class);
    /**
     * The shortest time between the starts of two claims while the runtime is loaded: a wake-up
     * sooner than that after the last claim waits for the rest, so a trickle of submits under load
     * makes one claim per interval, not one claim per task. A lightly loaded loop (fewer than
     * {@link #coalesceAbove} tasks in flight), or one whose last claim is older, claims at once,
     * so a task submitted to a quiet runtime starts without this wait.
     */
    static final Duration COALESCE = Duration.ofMillis(5);
    /**
     * How long after tasks last started here a runtime with nothing in flight counts as idle and
     * starts its own client's submit without a claim ({@link #reserve}). Shorter gaps are a stream
     * of submits, which claims (several tasks each) and results written together serve with fewer
     * commits than a start and a result per task.
     */
    static final Duration IDLE_GAP = Duration.ofMillis(2);
    /** Longest wait between two looks at the reservations of tasks waiting for a thread. */
    static final Duration EXTEND_CHECK = Duration.ofMillis(200);
    /** Longest wait between two failed claims. */
    static final long MAX_CLAIM_BACKOFF_MS = 1_000;
    /** After a submit inside a host transaction: when to look, since the host commits later. */
    static final List<Duration> AFTER_HOST_COMMIT = List.of(Duration.ofMillis(10), Duration.ofMillis(50),
            Duration.ofMillis(250), Duration.ofSeconds(1), Duration.ofSeconds(5));

    private final StateStore store;
    private final DatabaseClock clock;
    private final String instanceId;
    private final Set<WorkflowVersion> runnable;
    private final Metrics metrics;
    private final int claimBatch;
    private final int maxInFlight;
    private final int lowWater;
    /** In-flight count from which a wake-up coalesces: a sixteenth of a claim batch, at least 2. */
    private final int coalesceAbove;
    private final Duration pollInterval;
    private final AdaptivePoll poll;
    private final Consumer<ClaimedTask> onClaimed;
    /** {@link System#nanoTime()}, or a test's. */
    private final LongSupplier nanoTime;

    private final AtomicInteger inFlight = new AtomicInteger();
    /** {@link System#nanoTime()} when the last claim started; written by the claiming thread. */
    private volatile long lastClaimNanos;
    /** Moving average of a claim's round trip in ns (0: none yet); written by the claiming thread. */
    private volatile long claimNanos;
    /** {@link System#nanoTime()} when tasks last started here: a claim that found some, or a start at submit. */
    private volatile long lastStartNanos;
    /** True while the last claim found fewer due tasks than it asked for: nothing else is waiting. */
    private volatile boolean drained;
    private final AtomicLong hostCommitWakeUpsAt = new AtomicLong(System.nanoTime() - 1_000_000_000L);
    private final Object idle = new Object();
    private final Semaphore wake = new Semaphore(0);
    private volatile boolean running;
    private volatile ScheduledExecutorService timer;
    /** Tasks handed to threads and not started yet; null: claims are not gated (tests). */
    private volatile Admission admission;
    /** True while the loop waits for the tasks of its earlier claims to start: their start wakes it. */
    private final java.util.concurrent.atomic.AtomicBoolean gated = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * @param onClaimed starts a claimed task; it must {@link #release()} it eventually, also on failure
     *     after it returned normally (a throw releases it here)
     * @param runnable the registered workflow versions: the only ones this loop claims, so a node
     *     without a definition leaves its tasks to a peer that has it (rolling deploys)
     * @param pollInterval the longest wait between claims
     * @param poll how long to wait after each claim: short while recently busy, up to
     *     {@code pollInterval} when idle or when the store pushes wake-up hints
     */
    ClaimLoop(StateStore store, DatabaseClock clock, String instanceId, Set<WorkflowVersion> runnable, Metrics metrics,
            int claimBatch, int maxInFlight, Duration pollInterval, AdaptivePoll poll, Consumer<ClaimedTask> onClaimed) {
        this(store, clock, instanceId, runnable, metrics, claimBatch, maxInFlight, pollInterval, poll, onClaimed,
                System::nanoTime);
    }

    /** As above, with the time {@link #COALESCE} is measured on (tests). */
    ClaimLoop(StateStore store, DatabaseClock clock, String instanceId, Set<WorkflowVersion> runnable, Metrics metrics,
            int claimBatch, int maxInFlight, Duration pollInterval, AdaptivePoll poll, Consumer<ClaimedTask> onClaimed,
            LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.lastClaimNanos = nanoTime.getAsLong() - COALESCE.toNanos();
        this.lastStartNanos = lastClaimNanos;
        this.store = store;
        this.clock = clock;
        this.instanceId = instanceId;
        this.runnable = Set.copyOf(runnable);
        this.metrics = metrics;
        this.claimBatch = claimBatch;
        this.maxInFlight = maxInFlight;
        // Claim again once half a batch has drained, not at every release: fewer, fuller claims.
        this.lowWater = maxInFlight - Math.max(1, Math.min(claimBatch, maxInFlight) / 2);
        this.coalesceAbove = Math.max(2, Math.min(claimBatch, maxInFlight) / 16);
        this.pollInterval = pollInterval;
        this.poll = poll;
        this.onClaimed = onClaimed;
    }

    /**
     * Gates claims on {@code admission}: the loop claims only when fewer tasks of earlier claims
     * wait to start than the threads start during a claim's round trip, at most what this node can
     * start soon, and extends the reservations of tasks that still wait for a thread.
     */
    void admission(Admission admission) {
        this.admission = admission;
    }

    void start(ScheduledExecutorService timer) {
        this.timer = timer;
        this.running = true;
    }

    int inFlight() {
        return inFlight.get();
    }

    void wakeUp() {
        if (wake.availablePermits() == 0) {
            wake.release();
        }
    }

    void wakeUpAt(Instant due) {
        wakeUp();
        scheduleWakeUp(due, clock.instant());
    }

    void stop() {
        running = false;
        wakeUp();
    }

    boolean awaitIdle(Duration grace) throws InterruptedException {
        long deadline = System.nanoTime() + grace.toNanos();
        synchronized (idle) {
            while (inFlight.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(idle, left);
            }
        }
        return true;
    }

    /** Claims while running: while there is room and work, else waits for a wake-up or the poll interval. */
    void run() {
        long backoffMs = 100;
        while (running) {
            try {
                int held = inFlight.get();
                int got = 0;
                Admission gate = admission;
                if (gate != null) {
                    gate.extendDue();
                }
                // a node holds little more than one batch it has not started: claimed work waits for no thread
                if ((gate == null || gateOpen(gate)) && (held <= lowWater || held == 0)) {
                    int want = Math.min(claimBatch, maxInFlight - held);
                    if (gate != null) {
                        want = Math.min(want, gate.capacity());
                    }
                    if (want <= 0) {
                        // no room after all: wait for a start or the next look, never spin
                        wake.tryAcquire(EXTEND_CHECK.toMillis(), TimeUnit.MILLISECONDS);
                        continue;
                    }
                    try {
                        got = claim(want);
                        backoffMs = 100;
                    } catch (StateStoreException e) {
                        drained = false;
                        metrics.storeFailures.increment();
                        log.warn("instance {}: claim failed ({}); retrying in {} ms", instanceId, e.getMessage(), backoffMs);
                        wake.tryAcquire(backoffMs, TimeUnit.MILLISECONDS);
                        // At most 1 s: after a database restart the next claim must not wait out a long
                        // backoff (each failed claim already waits for the pool's connection time-out).
                        backoffMs = Math.min(backoffMs * 2, MAX_CLAIM_BACKOFF_MS);
                        continue;
                    }
                    drained = got < want;
                    if (got == want) {
                        continue;
                    }
                }
                long waitMs = poll.nextWaitMillis(got > 0);
                if (gate != null && gate.waiting() > 0) {
                    waitMs = Math.min(waitMs, EXTEND_CHECK.toMillis()); // their reservations are extended in time
                }
                boolean woken = wake.tryAcquire(waitMs, TimeUnit.MILLISECONDS);
                wake.drainPermits();
                if (woken) {
                    coalesce();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Throwable e) {
                // Contained (also Errors: a StackOverflowError or a store's LinkageError must not end
                // claiming for good); backs off so that an error that repeats does not spin.
                metrics.internalErrors.increment();
                log.error("instance {}: unexpected error in the claim loop; claiming again in {} ms", instanceId,
                        backoffMs, e);
                try {
                    wake.tryAcquire(backoffMs, TimeUnit.MILLISECONDS);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
                backoffMs = Math.min(backoffMs * 2, 10_000);
            }
        }
    }

    /**
     * While at least {@link #coalesceAbove} tasks are in flight, waits until {@link #COALESCE} has
     * passed since the last claim started (less if the last task finishes).
     */
    private void coalesce() throws InterruptedException {
        if (inFlight.get() < coalesceAbove) {
            return;
        }
        long deadline = lastClaimNanos + COALESCE.toNanos();
        synchronized (idle) {
            while (running && inFlight.get() > 0) {
                long left = deadline - nanoTime.getAsLong();
                if (left <= 0) {
                    return;
                }
                // at most one interval per wait, so a test's clock that jumps is seen within one
                TimeUnit.NANOSECONDS.timedWait(idle, Math.min(left, COALESCE.toNanos()));
            }
        }
    }

    /**
     * Wakes the loop a few times over the next moments: a task submitted in a host's transaction
     * becomes visible only when the host commits, which SAS cannot observe.
     */
    void wakeUpAfterHostCommit() {
        long last = hostCommitWakeUpsAt.get();
        long nanos = System.nanoTime();
        if (nanos - last < AFTER_HOST_COMMIT.get(0).toNanos() || !hostCommitWakeUpsAt.compareAndSet(last, nanos)) {
            return; // many submits in one host transaction: the wake-ups just scheduled serve them all
        }
        Instant now = clock.instant();
        for (Duration d : AFTER_HOST_COMMIT) {
            scheduleWakeUp(now.plus(d), now);
        }
    }

    /** Claims up to one batch and starts it; returns how many tasks were claimed. */
    int runOnce() {
        return claim(Math.min(claimBatch, maxInFlight - inFlight.get()));
    }

    private int claim(int want) {
        if (want <= 0) {
            return 0;
        }
        lastClaimNanos = nanoTime.getAsLong();
        clock.ensureFresh();
        List<ClaimedTask> claimed = store.claim(instanceId, want, clock.instant(), runnable);
        long took = Math.max(1, nanoTime.getAsLong() - lastClaimNanos);
        long avg = claimNanos;
        claimNanos = avg == 0 ? took : avg + (took - avg) / 8;
        metrics.claimPolled(clock.instant());
        if (claimed.isEmpty()) {
            return 0;
        }
        lastStartNanos = lastClaimNanos;
        inFlight.addAndGet(claimed.size());
        metrics.claimed.add(claimed.size());
        for (ClaimedTask c : claimed) {
            start(c);
        }
        return claimed.size();
    }

    /**
     * Takes room for a task of {@code workflow} that this node's client is about to insert already
     * claimed ({@link dev.sas.core.spi.ClaimedSubmits#submitClaimed}), if this loop is idle: it runs that workflow
     * version, nothing is in flight, its last claim found nothing else due, and no task started
     * here within {@link #IDLE_GAP}. Then starting at submit saves the claim's round trip and
     * commit. Under a stream of submits, claims that take several tasks at once and results written
     * together cost fewer commits than a start and a result per task, and they take due tasks in
     * priority order. The caller must follow with {@link #startReserved} or {@link #release()}.
     */
    boolean reserve(WorkflowVersion workflow) {
        if (!running || !drained || !runnable.contains(workflow)
                || nanoTime.getAsLong() - lastStartNanos < IDLE_GAP.toNanos() || !inFlight.compareAndSet(0, 1)) {
            return false;
        }
        lastStartNanos = nanoTime.getAsLong();
        return true;
    }

    /** Starts a task {@link #reserve reserved} for and inserted claimed by this node. */
    void startReserved(ClaimedTask c) {
        metrics.claimed.add(1);
        start(c);
    }

    private void start(ClaimedTask c) {
        try {
            onClaimed.accept(c);
        } catch (Throwable e) {
            metrics.internalErrors.increment();
            log.error("task {} step {}: could not start; the supervisor will recover it", c.taskId(),
                    c.currentStep(), e);
            release();
        }
    }

    /** A held task is no longer held (finished, released, or left to the supervisor). */
    void release() {
        int left = inFlight.decrementAndGet();
        if (left == 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
        if (left == lowWater && running) {
            wakeUp();
        }
    }

    /**
     * True if few enough tasks of earlier claims wait to start ({@link Admission#gateOpen}); else
     * marks the loop gated, so that {@link #noneWaiting()} wakes it (marked first, so a start in
     * between is not missed).
     */
    private boolean gateOpen(Admission gate) {
        gated.set(true);
        if (gate.gateOpen(claimNanos)) {
            gated.set(false);
            return true;
        }
        return false;
    }

    /** Few enough claimed tasks wait to start: wakes the loop if its gate held a claim back (no wake-up otherwise). */
    void noneWaiting() {
        if (gated.compareAndSet(true, false)) {
            wakeUp();
        }
    }

    /** Wakes the loop at {@code due}, if that comes before the next poll anyway. */
    void scheduleWakeUp(Instant due, Instant now) {
        ScheduledExecutorService t = timer;
        if (t == null || !running) {
            return;
        }
        // nanoseconds plus a millisecond: a wake-up even slightly before the due time claims nothing
        // and leaves the task to the next poll
        long delay = Duration.between(now, due).toNanos() + 1_000_000;
        if (delay < pollInterval.toNanos()) {
            try {
                t.schedule(this::wakeUp, Math.max(0, delay), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException shuttingDown) {
                // the next start polls anyway
            }
        }
    }
}
