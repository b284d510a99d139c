package dev.sas.core.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the scheduler's transitions. Started, it runs writer threads ({@code sas-scheduler-recorder-N})
 * that drains every transition queued meanwhile into one {@link StateStore#write} call, so many
 * step completions share a commit. Not started, it writes each transition on the caller's thread.
 * A transition that cannot be written before its deadline is given up (the supervisor recovers
 * the task); nothing is ever taken as written unless the store said so.
 */
public final class Recorder {
    private static final Logger log = LoggerFactory.getLogger(Recorder.class);

    /**
     * What became of a transition: the store's answer, or {@link #NOT_WRITTEN} when the recorder
     * gave up (store unavailable past the deadline, refused, or shutting down) and the store never
     * answered. Kept apart from {@link WriteOutcome}, which only stores return.
     */
    public enum Result {
        /** Written. */
        APPLIED,
        /** Rejected by the store: the lease moved on or the deadline passed. */
        STALE,
        /** Not written: an operator asked to cancel, and the transition yields to that. */
        CANCEL_REQUESTED,
        /** Given up without an answer from the store; the supervisor recovers the task. */
        NOT_WRITTEN;

        static Result of(WriteOutcome outcome) {
            return switch (outcome) {
                case APPLIED -> APPLIED;
                case STALE -> STALE;
                case CANCEL_REQUESTED -> CANCEL_REQUESTED;
            };
        }
    }

    /** Told what became of a transition. */
    public interface Callback {
        /**
         * @param result the store's answer, or {@link Result#NOT_WRITTEN}
         * @param writtenAt the instant passed to the store
         */
        void done(Result result, Instant writtenAt);
    }

    private record Pending(Transition transition, Instant deadline, Callback callback) {
    }

    private static final long INITIAL_BACKOFF_MS = 50;

    private final StateStore store;
    private final Clock clock;
    private final Metrics metrics;
    private final int maxBatch;
    private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    private final List<Thread> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile boolean stopping;

    /** A recorder writing inline until {@link #start()}. */
    public Recorder(StateStore store, Clock clock, Metrics metrics, int maxBatch) {
        this.store = store;
        this.clock = clock;
        this.metrics = metrics;
        this.maxBatch = maxBatch;
    }

    /**
     * Starts {@code writers} threads draining the queue, each committing its own batches. A task has
     * at most one transition queued at a time, and stores lock rows in task-id order, so batches of
     * different writers never conflict.
     */
    public void start(int writers) {
        NamedThreadFactory factory = new NamedThreadFactory("sas-scheduler-recorder");
        for (int i = 0; i < writers; i++) {
            Thread t = factory.newThread(this::loopContained);
            threads.add(t);
            t.start();
        }
    }

    /**
     * Records a transition, then calls back (on the writer thread, or inline).
     *
     * @param deadline give up retrying a failed write after this instant
     */
    public void write(Transition transition, Instant deadline, Callback callback) {
        if (threads.isEmpty()) {
            Instant now = clock.instant();
            Result result;
            try {
                result = Result.of(store.write(List.of(transition), now).get(0));
            } catch (StateStoreException e) {
                metrics.storeFailures.increment();
                log.warn("task {} step {}: could not record {} ({}); the supervisor will recover it",
                        transition.taskId(), transition.currentStep(), transition.status(), e.getMessage());
                result = Result.NOT_WRITTEN;
            } catch (Throwable e) {
                metrics.internalErrors.increment();
                log.error("task {} step {}: the store threw while recording {}; the supervisor will recover it",
                        transition.taskId(), transition.currentStep(), transition.status(), e);
                result = Result.NOT_WRITTEN;
            }
            callback.done(result, now);
            return;
        }
        queue.add(new Pending(transition, deadline, callback));
    }

    /** A writer thread: contains whatever escapes {@link #loop()} and starts it again, so writing goes on. */
    private void loopContained() {
        while (true) {
            try {
                loop();
                return;
            } catch (Throwable e) {
                metrics.internalErrors.increment();
                log.error("unexpected error in a recorder thread; it goes on", e);
            }
        }
    }

    private void loop() {
        List<Pending> retry = new ArrayList<>();
        long retryAtNanos = 0;
        long backoffMs = INITIAL_BACKOFF_MS;
        List<Pending> batch = new ArrayList<>(maxBatch);
        try {
            while (true) {
                batch.clear();
                if (!retry.isEmpty() && System.nanoTime() - retryAtNanos >= 0) {
                    batch.addAll(retry);
                    retry.clear();
                }
                queue.drainTo(batch, maxBatch - batch.size());
                if (batch.isEmpty()) {
                    if (stopping && retry.isEmpty() && queue.isEmpty()) {
                        return;
                    }
                    long waitMs = retry.isEmpty() ? 100
                            : Math.max(1, Math.min(100, (retryAtNanos - System.nanoTime()) / 1_000_000));
                    Pending first = queue.poll(waitMs, TimeUnit.MILLISECONDS);
                    if (first == null) {
                        continue;
                    }
                    batch.add(first);
                    queue.drainTo(batch, maxBatch - 1);
                }
                Instant now = clock.instant();
                List<Transition> transitions = new ArrayList<>(batch.size());
                for (Pending p : batch) {
                    transitions.add(p.transition);
                }
                try {
                    List<WriteOutcome> outcomes = store.write(transitions, now);
                    for (int i = 0; i < batch.size(); i++) {
                        complete(batch.get(i), Result.of(outcomes.get(i)), now);
                    }
                    backoffMs = INITIAL_BACKOFF_MS;
                } catch (Throwable e) {
                    // An Error or a bug in the store is handled like an outage: what the store did is
                    // unknown, so each transition is tried again (a replay is recognised as applied).
                    metrics.storeFailures.increment();
                    if (e instanceof StateStoreException) {
                        log.warn("could not record {} transitions ({}); retrying in {} ms", batch.size(),
                                e.getMessage(), backoffMs);
                    } else {
                        metrics.internalErrors.increment();
                        log.error("the store threw while recording {} transitions; retrying in {} ms", batch.size(),
                                backoffMs, e);
                    }
                    List<Pending> failed = batch.size() > 1 ? writeOneByOne(batch) : new ArrayList<>(batch);
                    if (failed.isEmpty()) {
                        continue;
                    }
                    retry.addAll(failed);
                    giveUpExpired(retry, now);
                    retryAtNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMs);
                    backoffMs = Math.min(backoffMs * 2, 5_000);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Instant now = clock.instant();
            for (Pending p : batch) {
                complete(p, Result.NOT_WRITTEN, now);
            }
            for (Pending p : retry) {
                complete(p, Result.NOT_WRITTEN, now);
            }
        }
    }

    /**
     * Tries each transition of a failed batch on its own, so that one the store refuses does not
     * hold the rest back. If the first two fail too, the store is taken to be down and all are
     * returned for a later retry. Once one has succeeded, a transition that still fails is refused
     * for itself: it is given up (the supervisor recovers its task at the deadline, and the failure
     * threshold bounds how often that repeats); those that failed before are retried later.
     *
     * @return the transitions to retry later
     */
    private List<Pending> writeOneByOne(List<Pending> batch) {
        List<Pending> retryLater = new ArrayList<>();
        boolean storeUp = false;
        for (Pending p : batch) {
            if (!storeUp && retryLater.size() >= 2) {
                retryLater.add(p);
                continue;
            }
            Instant now = clock.instant();
            try {
                complete(p, Result.of(store.write(List.of(p.transition), now).get(0)), now);
                storeUp = true;
            } catch (Throwable e) {
                if (storeUp) {
                    log.error("task {} step {}: the store refused to record {} ({}); left to the supervisor",
                            p.transition.taskId(), p.transition.currentStep(), p.transition.status(),
                            TaskStateMachine.describe(e), e instanceof StateStoreException ? null : e);
                    complete(p, Result.NOT_WRITTEN, now);
                } else {
                    retryLater.add(p);
                }
            }
        }
        return retryLater;
    }

    private void giveUpExpired(List<Pending> pending, Instant now) {
        pending.removeIf(p -> {
            if (p.deadline.isBefore(now)) {
                log.warn("task {} step {}: gave up recording {} after its deadline; the supervisor will recover it",
                        p.transition.taskId(), p.transition.currentStep(), p.transition.status());
                complete(p, Result.NOT_WRITTEN, now);
                return true;
            }
            return false;
        });
    }

    private void complete(Pending p, Result result, Instant now) {
        try {
            p.callback.done(result, now);
        } catch (Throwable e) {
            metrics.internalErrors.increment();
            log.error("task {} step {}: internal error after recording a transition", p.transition.taskId(),
                    p.transition.currentStep(), e);
        }
    }

    /** Writes what is queued, then stops the threads (waiting at most about {@code timeoutMs}). */
    public void stop(long timeoutMs) throws InterruptedException {
        stopping = true;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (t.isAlive()) {
                t.interrupt();
                t.join(1_000);
            }
        }
    }
}
