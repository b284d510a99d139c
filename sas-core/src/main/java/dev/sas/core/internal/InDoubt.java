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
 * rejected), plus {@link #GRACE} for a call started just before it. One rule ({@link #until}) for a
 * cancelled chain (the awaiting step's compensation is due then) and for a parallel or fan-out step
 * compensating its units.
 */
public final class InDoubt {
    /** How long past an in-doubt attempt's deadline its compensation waits for a call started just before it. */
    public static final Duration GRACE = Duration.ofSeconds(1);

    private InDoubt() {
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
     * When the effect of step {@code step} (definition {@code def}) of unknown outcome can no longer
     * be applied, read from the task's events: the one rule for a cancelled chain's awaiting step
     * (read when the task is claimed again) and for a parallel or fan-out step's units. Its last
     * attempt (the last {@code STEP_STARTED}, or its {@code COMPLETION_AWAITED}):
     * <ul>
     *   <li>answered by the party ({@code COMPLETION_RECEIVED}) or completed: nothing in doubt;</li>
     *   <li>its request went outside SAS ({@link #sendsRequest}), or its call has not ended: the
     *       request may be applied until that attempt's deadline, plus {@link #GRACE}, even after a
     *       failed send (a broker's confirm timed out; the request may still be queued) or a time-out
     *       (then already past);</li>
     *   <li>a call in process that ended (a failure is recorded once its call has ended, a time-out
     *       after its deadline): {@link #GRACE} after that, for a call started just before it.</li>
     * </ul>
     * Null for a step without a compensation (a timer, a fan-out lane's rest: nothing to undo), or if
     * the events show no attempt of the step.
     */
    public static Instant until(StepDefinition<?> def, int step, List<TaskEvent> events) {
        if (!def.hasCompensation()) {
            return null;
        }
        TaskEvent sent = null;
        TaskEvent last = null;
        boolean answered = false;
        for (TaskEvent e : events) {
            if (e.stepIndex() != step) {
                continue;
            }
            switch (e.type()) {
                case STEP_STARTED, COMPLETION_AWAITED -> {
                    sent = e;
                    last = e;
                    answered = false;
                }
                case COMPLETION_RECEIVED, STEP_COMPLETED -> answered = true;
                case STEP_RETRYING, STEP_TIMED_OUT, STEP_FAILED -> last = e;
                default -> {
                }
            }
        }
        if (sent == null || answered) {
            return null;
        }
        if (sendsRequest(def) || last == sent) {
            return sentAt(def, sent.at());
        }
        return last.at().plus(GRACE);
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
