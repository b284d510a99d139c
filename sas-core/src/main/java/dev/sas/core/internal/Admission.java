package dev.sas.core.internal;

import dev.sas.core.TaskStatus;
import dev.sas.core.spi.DeadlineRenewal;
import dev.sas.core.spi.StateStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a step's deadline running only while the step runs. Every task handed to a thread (the
 * step executor, or an agent's executor) waits here until the thread starts it. A task that starts
 * within {@link #tolerance} of the time its deadline was set keeps that deadline and costs no write
 * (the hot path). A later one first gets {@code completeBy = now + completeWithin} on the store's
 * clock ({@link StateStore#renewDeadlines}, fenced by lease, step and state); a stale answer means
 * it is no longer this node's, and it is not started. Tasks that still wait when their reservation
 * nears its end ({@link #RENEW_BEFORE}) are extended by the same call from {@link #extendDue()}, so
 * a live node never loses them to the supervisor; a node that cannot extend them loses them
 * cleanly (the fence). Renewals of concurrent callers share one store call. The claim loop asks
 * {@link #gateOpen(long)} before it claims: open while fewer tasks wait than this node's threads
 * start during a claim's round trip (so the threads do not run dry while the next batch is being
 * claimed, and a node holds at most that many plus one batch it has not started), and
 * {@link #capacity()} for how many it can start soon. Thread-safe.
 */
final class Admission {
    private static final Logger log = LoggerFactory.getLogger(Admission.class);
    /**
     * A waiting task's reservation is extended once it has less than this left: room for a claim
     * loop pass and a store call that are slow on a loaded machine (1 s was not, on 2 busy cores).
     */
    static final Duration RENEW_BEFORE = Duration.ofSeconds(2);
    /**
     * Shortest reservation an extension writes: a short step's own time would run out between two
     * checks. It bounds how long a dead node's waiting tasks stay reserved.
     */
    static final Duration MIN_RESERVATION = Duration.ofSeconds(5);
    /** Longest time a step may start after its deadline was set without restarting the deadline. */
    static final Duration MAX_TOLERANCE = Duration.ofMillis(500);
    /** How far ahead {@link #capacity()} looks: the tasks this node's threads can start within it. */
    static final Duration START_HORIZON = Duration.ofMillis(250);
    private static final long START_HORIZON_NANOS = START_HORIZON.toNanos();
    /**
     * The gate stays open while fewer tasks wait than the threads start in this many claim round
     * trips. Eight, not two: with two, a drain of no-op steps kept so few tasks waiting that its
     * results were written in smaller batches (H2 drain 10-13 % slower than without the gate, on a
     * quiet machine; docs/benchmarks.md). Slow steps are bounded by {@link #START_HORIZON} instead.
     */
    static final int ROUND_TRIPS_AHEAD = 8;
    /** The most that may wait, in claim batches, however fast the steps start. */
    static final int MAX_WAITING_BATCHES = 4;
    /** Longest gap between two starts that counts towards the start rate (an idle gap is not a rate). */
    static final Duration MAX_START_GAP = Duration.ofMillis(500);

    /** A task handed to a thread and not started yet. */
    static final class Ticket {
        final TaskRun run;
        /** The attempt whose deadline timer runs while its agent call waits; null for a step not started. */
        volatile Attempt attempt;
        private final AtomicInteger state = new AtomicInteger(WAITING);
        /** Guarded by this: the start began (no extension after this). */
        private boolean starting;
        /** Guarded by this: an extension was (being) written, so the deadline is not the claim's. */
        private boolean extended;
        /** A renewal was stale: the task is no longer this node's. */
        private volatile boolean lost;

        Ticket(TaskRun run) {
            this.run = run;
        }
    }

    private static final int WAITING = 0;
    private static final int STARTED = 1;
    private static final int GONE = 2;

    /** Renewals waiting for the next store call; {@code starting} ones restart the deadline exactly. */
    private record Request(Ticket ticket, boolean starting) {
    }

    private final StateStore store;
    private final DatabaseClock clock;
    private final String instanceId;
    private final Set<Ticket> waiting = ConcurrentHashMap.newKeySet();
    private final AtomicInteger waitingCount = new AtomicInteger();
    private final ConcurrentLinkedQueue<Request> queue = new ConcurrentLinkedQueue<>();
    private final ReentrantLock renewing = new ReentrantLock();
    /** Exponential moving average of how long an attempt ran, in ns (0: none yet). */
    private final AtomicLong runNanos = new AtomicLong();
    /** Exponential moving average of the time between two starts on this node, in ns (0: none yet). */
    private final AtomicLong startGapNanos = new AtomicLong();
    /** {@link #nanoTime} of the last start (0: none yet). */
    private final AtomicLong lastStartNanos = new AtomicLong();
    /** The gate is open while fewer tasks than this wait; the claim loop's last round trip sets it. */
    private volatile int openBelow = 1;
    private volatile Runnable onNoneWaiting = () -> { };
    private volatile int threads;
    private final int maxBatch;
    /** {@link System#nanoTime()}, or a test's: the start rate is measured on it. */
    private final LongSupplier nanoTime;

    Admission(StateStore store, DatabaseClock clock, String instanceId, int maxBatch) {
        this(store, clock, instanceId, maxBatch, System::nanoTime);
    }

    Admission(StateStore store, DatabaseClock clock, String instanceId, int maxBatch, LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.store = store;
        this.clock = clock;
        this.instanceId = instanceId;
        this.maxBatch = maxBatch;
    }

    /**
     * @param threads the step threads (0 when unknown: {@link #capacity()} does not limit claims)
     * @param onNoneWaiting called when the waiting tasks drop below what keeps the gate shut
     */
    void start(int threads, Runnable onNoneWaiting) {
        this.threads = threads;
        this.onNoneWaiting = onNoneWaiting;
    }

    /** Tasks handed to a thread and not started yet. */
    int waiting() {
        return waitingCount.get();
    }

    /**
     * True if the claim loop may claim: fewer tasks wait than this node's threads start within
     * {@link #ROUND_TRIPS_AHEAD} claim round trips of {@code claimNanos} at the start rate seen so
     * far (at least: none waits), and never more than they start within {@link #START_HORIZON} (by
     * the length of the attempts and by the start rate seen so far), so
     * the threads have work while the next claim is under way and {@link #capacity()} has room. A
     * task that waits longer than its tolerance still gets its deadline restarted when it starts.
     *
     * @param claimNanos how long a claim took lately (0: unknown)
     */
    boolean gateOpen(long claimNanos) {
        long gap = startGapNanos.get();
        // until an attempt has finished, how many the threads start soon is unknown: none may wait
        long ahead = gap <= 0 || claimNanos <= 0 || runNanos.get() <= 0 ? 0 : ROUND_TRIPS_AHEAD * claimNanos / gap;
        // and no more than start within the horizon at the rate they do start: on a starved machine short
        // steps start slowly, and a task that waits past its tolerance costs a deadline write to start
        long inHorizon = gap <= 0 ? ahead : START_HORIZON_NANOS / gap;
        int below = (int) Math.max(1, Math.min(Math.min((long) MAX_WAITING_BATCHES * maxBatch, startable()),
                Math.min(ahead, inHorizon) + 1));
        openBelow = below;
        return waitingCount.get() < below;
    }

    /**
     * How many more tasks this node can start within {@link #START_HORIZON}: each thread one now,
     * and as many more as attempts of the average length seen so far fit in the horizon, less the
     * tasks already waiting. Unbounded while nothing has run yet or the threads are unknown.
     */
    int capacity() {
        long n = startable();
        return n == Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) Math.max(0, n - waitingCount.get());
    }

    /** The tasks this node's threads start within {@link #START_HORIZON}; unbounded while unknown. */
    private long startable() {
        long avg = runNanos.get();
        int t = threads;
        if (avg <= 0 || t <= 0) {
            return Integer.MAX_VALUE;
        }
        long perThread = 1 + START_HORIZON.toNanos() / avg;
        return Math.min(Integer.MAX_VALUE, perThread * t);
    }

    /** An attempt ran for {@code nanos} (from its start to its result). */
    void ran(long nanos) {
        long n = Math.max(1, nanos);
        runNanos.getAndUpdate(avg -> avg == 0 ? n : avg + (n - avg) / 8);
    }

    /** The task is handed to a thread now. */
    Ticket enqueue(TaskRun run) {
        Ticket t = new Ticket(run);
        waiting.add(t);
        waitingCount.incrementAndGet();
        return t;
    }

    /**
     * The task will not start (dropped, held back, its deadline passed, shutting down). No-op when it
     * started or was given up already.
     */
    void abandon(Ticket t) {
        if (t.state.compareAndSet(WAITING, GONE)) {
            left(t);
        }
    }

    /**
     * A thread is about to start the task's step: true if it may, with its deadline in
     * {@code run.completeBy} (and the attempt's, if set) restarted now when it waited longer than
     * the tolerance. False if it must not start: the store answered stale (the caller releases it),
     * or it was {@link #abandon abandoned} meanwhile (whoever did so released it).
     */
    boolean begin(Ticket t) {
        if (t.state.get() != WAITING) {
            return false;
        }
        TaskRun run = t.run;
        Duration within = within(run);
        boolean prompt;
        synchronized (t) {
            t.starting = true;
            prompt = !t.extended && !t.lost && !clock.instant().isAfter(keepsDeadlineUntil(run.completeBy, within));
        }
        if (!prompt && !t.lost) {
            DeadlineRenewal.Outcome outcome = renew(new Request(t, true));
            if (outcome == null && clock.instant().isAfter(run.completeBy)) {
                log.warn("task {} step {}: waited past its deadline {} for a thread and the store could not renew it;"
                        + " not started, left to the supervisor", run.taskId, run.currentStep, run.completeBy);
                t.lost = true;
            } else if (outcome == null) {
                log.warn("task {} step {}: the store could not restart its deadline; it runs with the one it has, {}",
                        run.taskId, run.currentStep, run.completeBy);
            }
        }
        if (t.lost) {
            if (t.state.compareAndSet(WAITING, GONE)) {
                left(t);
            }
            return false;
        }
        if (!t.state.compareAndSet(WAITING, STARTED)) {
            return false;
        }
        started();
        left(t);
        return true;
    }

    /** Counts a start towards the start rate {@link #gateOpen} sizes the gate with. */
    private void started() {
        long now = nanoTime.getAsLong();
        long last = lastStartNanos.getAndSet(now);
        if (last != 0) {
            long gap = Math.max(1, Math.min(now - last, MAX_START_GAP.toNanos()));
            startGapNanos.getAndUpdate(avg -> avg == 0 ? gap : avg + (gap - avg) / 8);
        }
    }

    /**
     * Extends the reservation of every waiting task with less than {@link #RENEW_BEFORE} left, in
     * one store call. Called by the claim loop while tasks wait.
     */
    void extendDue() {
        if (waitingCount.get() == 0) {
            return;
        }
        Instant soon = clock.instant().plus(RENEW_BEFORE);
        boolean any = false;
        for (Ticket t : waiting) {
            synchronized (t) {
                if (t.starting || t.lost || t.state.get() != WAITING || t.run.completeBy.isAfter(soon)) {
                    continue;
                }
                t.extended = true;
            }
            queue.add(new Request(t, false));
            any = true;
        }
        if (any) {
            flushAsCaller();
        }
    }

    private void left(Ticket t) {
        waiting.remove(t);
        if (waitingCount.decrementAndGet() < openBelow) {
            onNoneWaiting.run();
        }
    }

    /** Queues {@code r} and makes sure a store call carries it; returns its outcome (null: store failed). */
    private DeadlineRenewal.Outcome renew(Request r) {
        RenewalResult result = new RenewalResult();
        results.put(r.ticket, result);
        queue.add(r);
        flushAsCaller();
        return result.outcome;
    }

    private final Map<Ticket, RenewalResult> results = new ConcurrentHashMap<>();

    private static final class RenewalResult {
        volatile DeadlineRenewal.Outcome outcome;
    }

    /** Takes the lock and writes what is queued (a caller that waited finds its request written by the holder). */
    private void flushAsCaller() {
        renewing.lock();
        try {
            while (!queue.isEmpty()) {
                flush();
            }
        } finally {
            renewing.unlock();
        }
    }

    /** One store call for up to {@code maxBatch} queued renewals; a start's renewal wins over an extension. */
    private void flush() {
        Map<Ticket, Request> batch = new LinkedHashMap<>();
        Request r;
        while (batch.size() < maxBatch && (r = queue.poll()) != null) {
            Request before = batch.get(r.ticket);
            if (before == null || r.starting) {
                batch.put(r.ticket, r);
            }
        }
        // an extension chosen before its task began starting is dropped: the start renews it exactly
        batch.values().removeIf(x -> {
            synchronized (x.ticket) {
                return !x.starting && x.ticket.starting;
            }
        });
        if (batch.isEmpty()) {
            return;
        }
        Instant now = clock.instant();
        List<Request> requests = new ArrayList<>(batch.values());
        List<DeadlineRenewal> renewals = new ArrayList<>(requests.size());
        for (Request q : requests) {
            TaskRun run = q.ticket.run;
            Duration within = within(run);
            Duration length = q.starting || within.compareTo(MIN_RESERVATION) >= 0 ? within : MIN_RESERVATION;
            renewals.add(new DeadlineRenewal(run.taskId, instanceId, run.lease, run.status, run.currentStep,
                    now.plus(length)));
        }
        List<DeadlineRenewal.Outcome> outcomes = null;
        try {
            outcomes = store.renewDeadlines(renewals, now);
        } catch (RuntimeException e) {
            log.warn("instance {}: could not renew the deadlines of {} task(s) waiting to start ({})", instanceId,
                    renewals.size(), e.getMessage());
        }
        for (int i = 0; i < requests.size(); i++) {
            Request q = requests.get(i);
            DeadlineRenewal.Outcome o = outcomes == null ? null : outcomes.get(i);
            Ticket t = q.ticket;
            if (o == DeadlineRenewal.Outcome.RENEWED) {
                Instant completeBy = renewals.get(i).completeBy();
                t.run.completeBy = completeBy;
                Attempt a = t.attempt;
                if (a != null) {
                    a.completeBy = completeBy;
                }
            } else if (o == DeadlineRenewal.Outcome.STALE) {
                t.lost = true;
                TaskLog.run(t.run.taskId, t.run.workflow.name(), t.run.currentStep, t.run.attempt, () -> log.warn(
                        "task {} step {}: no longer held by this node (lease {} moved on or its deadline passed) before"
                                + " it could start; not started", t.run.taskId, t.run.currentStep, t.run.lease));
            }
            if (q.starting) {
                RenewalResult res = results.remove(t);
                if (res != null) {
                    res.outcome = o;
                }
            }
        }
    }

    /** The time the task's current step (or compensation) has once started. */
    private static Duration within(TaskRun run) {
        return run.workflow.steps().get(run.currentStep).completeWithin(run.status == TaskStatus.COMPENSATING);
    }

    /** How late a step may start and keep the deadline set at its claim: a tenth of its time, at most {@link #MAX_TOLERANCE}. */
    static Duration tolerance(Duration within) {
        return within.compareTo(TENFOLD_MAX_TOLERANCE) >= 0 ? MAX_TOLERANCE : Duration.ofNanos(within.toNanos() / 10);
    }

    private static final Duration TENFOLD_MAX_TOLERANCE = MAX_TOLERANCE.multipliedBy(10);

    /**
     * The latest start that keeps {@code completeBy}, the deadline set {@code within} before it
     * ran out: {@code completeBy - within + tolerance(within)}. On longs for the usual step times,
     * since every start asks ({@code Duration.dividedBy} divides in {@code BigDecimal}).
     */
    static Instant keepsDeadlineUntil(Instant completeBy, Duration within) {
        if (within.compareTo(TENFOLD_MAX_TOLERANCE) >= 0) {
            return completeBy.minus(within).plus(MAX_TOLERANCE);
        }
        long w = within.toNanos();
        return completeBy.minusNanos(w - w / 10);
    }
}
