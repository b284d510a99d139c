package dev.sas.core.internal;

import dev.sas.core.StepDefinition;
import dev.sas.core.TaskEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * When a step of unknown outcome can no longer be applied, so that compensating it undoes its effect
 * rather than coming before it. A request that went out (a call started, an awaiting step's request
 * sent, perhaps onto a queue whose worker died and whose redelivered request runs later) may still be
 * applied until its attempt's deadline, which agents honour ({@code remaining()}, expired requests
 * rejected), plus {@link #GRACE} for a call started just before it. Used by a cancelled chain (the
 * awaiting step's compensation is due then) and by a parallel or fan-out step compensating its units.
 */
public final class InDoubt {
    /** How long past an in-doubt attempt's deadline its compensation waits for a call started just before it. */
    public static final Duration GRACE = Duration.ofSeconds(1);

    private InDoubt() {
    }

    /**
     * When the effect of step {@code def}, whose last event was {@code last}, can no longer be applied:
     * a request sent or a call started at {@code at} ends by {@code at + completeWithin}; a time-out is
     * recorded after the deadline and a failure once its call has ended, so only the grace is added.
     * Null for a step without a compensation (a timer, a fan-out lane's rest): nothing to wait for.
     */
    public static Instant until(StepDefinition<?> def, TaskEvent last) {
        boolean open = last.type() == TaskEvent.Type.STEP_STARTED || last.type() == TaskEvent.Type.COMPLETION_AWAITED;
        return open ? sentAt(def, last.at()) : def.hasCompensation() ? last.at().plus(GRACE) : null;
    }

    /**
     * Whether step {@code def} awaits its completion from a party outside SAS (an agent, a person). A
     * parallel or fan-out step awaits its units (its own compensation waits for their requests, see
     * {@code ChildGroup}), a child-task step its child (which waits for its own).
     */
    static boolean sendsRequest(StepDefinition<?> def) {
        return def.awaitsCompletion() && !def.runsUnits() && !def.startsChildTask();
    }

    /** {@code until} if it has not passed at {@code now}, else null (also for null). */
    static Instant pending(Instant until, Instant now) {
        return until != null && now.isBefore(until) ? until : null;
    }

    /** {@link #until} for a request of step {@code def} sent (or a call started) at {@code at}. */
    static Instant sentAt(StepDefinition<?> def, Instant at) {
        return def.hasCompensation() ? at.plus(def.completeWithin()).plus(GRACE) : null;
    }

    /**
     * For a cancel found when a task is claimed again after step {@code step} sent its request: when
     * the request its last attempt sent can no longer be applied, read from the task's events. The
     * last attempt's start (or its request sent, if later) bounds it unless the party answered
     * ({@code COMPLETION_RECEIVED}): a request whose send failed (a broker's confirm timed out) may
     * still be queued, and one timed out was due by its deadline anyway. Null if the step sends no
     * request outside SAS, has no compensation, was answered, or its events show no attempt.
     */
    static Instant awaitedUntil(StepDefinition<?> def, int step, List<TaskEvent> events) {
        if (!sendsRequest(def)) {
            return null;
        }
        TaskEvent sent = null;
        boolean answered = false;
        for (TaskEvent e : events) {
            if (e.stepIndex() != step) {
                continue;
            }
            if (e.type() == TaskEvent.Type.STEP_STARTED || e.type() == TaskEvent.Type.COMPLETION_AWAITED) {
                sent = e;
                answered = false;
            } else if (e.type() == TaskEvent.Type.COMPLETION_RECEIVED) {
                answered = true;
            }
        }
        return sent == null || answered ? null : sentAt(def, sent.at());
    }

    /**
     * For an attempt of step {@code def} that began at {@code startedAt} and failed with {@code error}
     * (its send threw, or it ran out of time): when its request can no longer be applied. Null if the
     * step sends no request outside SAS, or the party answered the failure ({@code answered}).
     */
    static Instant failedSend(StepDefinition<?> def, Instant startedAt, boolean answered) {
        return answered || startedAt == null || !sendsRequest(def) ? null : sentAt(def, startedAt);
    }
}
