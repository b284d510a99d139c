package dev.sas.core.internal;

import dev.sas.core.SasMetrics;
import java.util.concurrent.atomic.LongAdder;

/** Counters behind {@link SasMetrics}. Thread-safe. */
public final class Metrics {
    final LongAdder claimed = new LongAdder();
    final LongAdder stepsCompleted = new LongAdder();
    final LongAdder tasksProcessed = new LongAdder();
    final LongAdder retriesScheduled = new LongAdder();
    final LongAdder timeoutsRecovered = new LongAdder();
    final LongAdder staleRejected = new LongAdder();
    final LongAdder deadlinesMissed = new LongAdder();
    final LongAdder errors = new LongAdder();
    final LongAdder compensated = new LongAdder();
    final LongAdder compensationFailed = new LongAdder();
    final LongAdder storeFailures = new LongAdder();
    final LongAdder listenerFailures = new LongAdder();
    final LongAdder eventsDropped = new LongAdder();
    final LongAdder internalErrors = new LongAdder();
    final LongAdder submitted = new LongAdder();
    final LongAdder statusUpdatesDelivered = new LongAdder();
    final LongAdder statusUpdateFailures = new LongAdder();
    final LongAdder statusChannelUnknown = new LongAdder();
    final LongAdder heldBack = new LongAdder();
    final LongAdder breakersOpened = new LongAdder();
    final LongAdder breakersClosed = new LongAdder();
    final LongAdder lateCompletions = new LongAdder();
    final LongAdder staleCompletions = new LongAdder();
    final LongAdder invalidCompletionTokens = new LongAdder();
    final LongAdder permitsLapsed = new LongAdder();
    final LongAdder supervisorPassesStopped = new LongAdder();
    final LongAdder scheduleFires = new LongAdder();
    final LongAdder scheduleFiresSkipped = new LongAdder();
    private volatile long clockSkewMillis;
    private volatile java.time.Instant lastClaimPoll;

    /**
     * Counts a task's end. A parallel branch's or fan-out element's ERROR, COMPENSATED or CANCELLED
     * is not counted: it is its parent step's outcome, and the parent's end is counted (a unit in
     * ERROR is compensated by its parent and raises no alert either).
     *
     * @param workflow the task's workflow, or null if this runtime does not know it
     */
    void ended(dev.sas.core.TaskStatus status, dev.sas.core.Workflow<?> workflow) {
        boolean unit = workflow != null && workflow.isGroupUnit();
        switch (status) {
            case PROCESSED -> tasksProcessed.increment();
            case ERROR -> {
                if (!unit) {
                    errors.increment();
                }
            }
            case COMPENSATION_FAILED -> compensationFailed.increment();
            case COMPENSATED, CANCELLED -> {
                if (!unit) {
                    compensated.increment();
                }
            }
            default -> { }
        }
    }

    /** Counts a failed store operation. */
    public void storeFailure() {
        storeFailures.increment();
    }

    /** Counts an unexpected exception or error a long-lived thread contained (logged, the thread went on). */
    public void internalError() {
        internalErrors.increment();
    }

    /** Records the last measured offset of the store's clock to this node's, in ms. */
    public void clockSkew(long millis) {
        clockSkewMillis = millis;
    }

    /** Counts a task finished PROCESSED outside the scheduler (by a step completion through the client). */
    public void tasksProcessed() {
        tasksProcessed.increment();
    }

    /** Counts a step completion rejected because it came after the step's deadline. */
    public void lateCompletion() {
        lateCompletions.increment();
    }

    /** Counts a step completion rejected because its token's attempt was no longer the task's. */
    public void staleCompletion() {
        staleCompletions.increment();
    }

    /** Counts a step completion refused because its token was forged, altered, malformed or signed with an unknown key. */
    public void invalidCompletionToken() {
        invalidCompletionTokens.increment();
    }

    /**
     * Counts a schedule's fire times decided by this runtime: {@code fired} tasks it created, and
     * {@code skipped} missed fire times its missed-fire policy dropped.
     */
    public void scheduleFires(int fired, long skipped) {
        scheduleFires.add(fired);
        scheduleFiresSkipped.add(skipped);
    }

    /** Counts tasks submitted through the runtime's client. */
    public void submitted(int tasks) {
        submitted.add(tasks);
    }

    /** Records that a claim query succeeded at {@code at} (whether or not it found tasks). */
    void claimPolled(java.time.Instant at) {
        lastClaimPoll = at;
    }

    /** When a claim query last succeeded, or null if none has. */
    public java.time.Instant lastClaimPoll() {
        return lastClaimPoll;
    }

    /** A snapshot. */
    public SasMetrics snapshot() {
        return new SasMetrics(claimed.sum(), stepsCompleted.sum(), tasksProcessed.sum(), retriesScheduled.sum(),
                timeoutsRecovered.sum(), staleRejected.sum(), deadlinesMissed.sum(), errors.sum(), compensated.sum(),
                compensationFailed.sum(), storeFailures.sum(), listenerFailures.sum(), eventsDropped.sum(),
                internalErrors.sum(), clockSkewMillis, submitted.sum(), statusUpdatesDelivered.sum(), statusUpdateFailures.sum(),
                statusChannelUnknown.sum(), heldBack.sum(), breakersOpened.sum(), breakersClosed.sum(),
                lateCompletions.sum(), staleCompletions.sum(), invalidCompletionTokens.sum(), permitsLapsed.sum(),
                supervisorPassesStopped.sum(), scheduleFires.sum(), scheduleFiresSkipped.sum());
    }
}
