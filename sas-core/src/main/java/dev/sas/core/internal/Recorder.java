package dev.sas.core.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.StoreUnavailableException;
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
        /** Written, now or by an earlier try whose acknowledgement was lost (a replay recognised as applied). */
        APPLIED,
        /** Rejected by the store: the lease moved on or the deadline passed. */
        STALE,
        /** Not written: an operator asked to cancel, and the transition yields to that. */
        CANCEL_REQUESTED,
        /**
         * Not written: it holds a value the store cannot hold, or the store failed on it alone while
         * writing the rest of its batch. Never retried.
         */
        REFUSED,
        /** Given up without an answer from the store; the supervisor recovers the task. */
        NOT_WRITTEN;

        static Result of(WriteOutcome outcome) {
            return switch (outcome.kind()) {
                case APPLIED, APPLIED_ALREADY -> APPLIED;
                case STALE -> STALE;
                case CANCEL_REQUESTED -> CANCEL_REQUESTED;
                case REFUSED -> REFUSED;
                // stores answer BUSY only to a supervisor's recovery, never to the recorder's writes
                case BUSY -> NOT_WRITTEN;
            };
        }
    }

    /** Told what became of a transition. */
    public interface Callback {
        /**
         * @param result the store's answer, or {@link Result#NOT_WRITTEN}
         * @param refusal for {@link Result#REFUSED}, why; otherwise null
         * @param writtenAt the instant passed to the store
         */
        void done(Result result, String refusal, Instant writtenAt);
    }

    private static final class Pending {
        final Transition transition;
        final Instant deadline;
        final Callback callback;
        /** Failed when written on its own (kept across retries, so it is tried after the others). */
        boolean failedAlone;

        Pending(Transition transition, Instant deadline, Callback callback) {
            this.transition = transition;
            this.deadline = deadline;
            this.callback = callback;
        }
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
            WriteOutcome outcome = null;
            try {
                outcome = store.write(List.of(transition), now).get(0);
                replayed(transition, outcome);
            } catch (StateStoreException e) {
                metrics.storeFailures.increment();
                log.warn("task {} step {}: could not record {} ({}); the supervisor will recover it",
                        transition.taskId(), transition.currentStep(), transition.status(), e.getMessage());
            } catch (Throwable e) {
                metrics.internalErrors.increment();
                log.error("task {} step {}: the store threw while recording {}; the supervisor will recover it",
                        transition.taskId(), transition.currentStep(), transition.status(), e);
            }
            if (outcome == null) {
                callback.done(Result.NOT_WRITTEN, null, now);
            } else {
                callback.done(Result.of(outcome), outcome.reason(), now);
            }
            return;
        }
        queue.add(new Pending(transition, deadline, callback));
    }

    /**
     * Writes a transition that makes a task await a reply, or the kept reply's instead, on the
     * calling thread ({@link dev.sas.core.spi.StepCompletionStore#awaitCompletion}).
     *
     * @throws StateStoreException if the store failed
     * @throws UnsupportedOperationException if the store keeps no step completions
     */
    public dev.sas.core.spi.AwaitWrite awaitCompletion(Transition awaiting,
            java.util.function.Function<dev.sas.core.spi.StepCompletion, Transition> ifCompleted, Instant now) {
        return store.stepCompletions().orElseThrow(() -> new UnsupportedOperationException(store
                + " does not support steps that await a completion")).awaitCompletion(awaiting, ifCompleted, now);
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
                        complete(batch.get(i), outcomes.get(i), now);
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
     * Tries each transition of a failed batch on its own, so that one the store fails on does not
     * hold the rest back. Those that failed alone before are tried last, so two of them cannot stand
     * in front of the rest. If the first two tried fail, the store is taken to be down and all are
     * returned for a later retry. Once one has succeeded, each that failed is tried once more, and
     * if it fails again it is refused for itself ({@link Result#REFUSED}, never retried; its step is
     * failed with the store's error). A write that failed because the store was unavailable
     * ({@link StoreUnavailableException}: a lost connection, a failover) says nothing about the
     * transition, so it is never refused: it waits for the next retry with the others.
     *
     * @return the transitions to retry later
     */
    private List<Pending> writeOneByOne(List<Pending> batch) {
        List<Pending> ordered = new ArrayList<>(batch.size());
        for (Pending p : batch) {
            if (!p.failedAlone) {
                ordered.add(p);
            }
        }
        for (Pending p : batch) {
            if (p.failedAlone) {
                ordered.add(p);
            }
        }
        List<Pending> failed = new ArrayList<>();
        boolean storeUp = false;
        int tried = 0;
        for (Pending p : ordered) {
            if (!storeUp && tried >= 2) {
                failed.add(p);
                continue;
            }
            tried++;
            Instant now = clock.instant();
            try {
                complete(p, store.write(List.of(p.transition), now).get(0), now);
                storeUp = true;
            } catch (StoreUnavailableException e) {
                failed.add(p);
            } catch (Throwable e) {
                p.failedAlone = true;
                failed.add(p);
            }
        }
        if (!storeUp) {
            return failed;
        }
        // The store is up: what failed alone is tried once more (a passing glitch), then refused,
        // unless the store was unavailable for it (then it waits for the next retry).
        List<Pending> later = new ArrayList<>();
        for (Pending p : failed) {
            Instant now = clock.instant();
            try {
                complete(p, store.write(List.of(p.transition), now).get(0), now);
            } catch (StoreUnavailableException e) {
                later.add(p);
            } catch (Throwable e) {
                refuse(p, e, now);
            }
        }
        return later;
    }

    private void refuse(Pending p, Throwable e, Instant now) {
        String reason = TaskStateMachine.describe(e);
        log.error("task {} step {}: the store failed to record {} while it recorded others ({}); refused",
                p.transition.taskId(), p.transition.currentStep(), p.transition.status(), reason,
                e instanceof StateStoreException ? null : e);
        complete(p, Result.REFUSED, reason, now);
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

    private void complete(Pending p, WriteOutcome outcome, Instant now) {
        replayed(p.transition, outcome);
        complete(p, Result.of(outcome), outcome.reason(), now);
    }

    /** A replay recognised as applied: the earlier try committed but its acknowledgement was lost. */
    private static void replayed(Transition t, WriteOutcome outcome) {
        if (outcome.kind() == WriteOutcome.Kind.APPLIED_ALREADY) {
            log.info("task {} step {}: {} had been recorded by an earlier try whose acknowledgement was lost",
                    t.taskId(), t.currentStep(), t.status());
        }
    }

    private void complete(Pending p, Result result, Instant now) {
        complete(p, result, null, now);
    }

    private void complete(Pending p, Result result, String refusal, Instant now) {
        try {
            p.callback.done(result, refusal, now);
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
