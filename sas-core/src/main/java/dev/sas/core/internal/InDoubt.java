package dev.sas.core.internal;

import dev.sas.core.StepDefinition;
import dev.sas.core.TaskEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

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

    /** A step's events that leave its outcome open, or end its last call. */
    private static final Set<TaskEvent.Type> LAST_CALL = EnumSet.of(TaskEvent.Type.STEP_STARTED,
            TaskEvent.Type.COMPLETION_AWAITED, TaskEvent.Type.STEP_TIMED_OUT, TaskEvent.Type.STEP_RETRYING,
            TaskEvent.Type.STEP_FAILED);

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
     * parallel, fan-out or child-task step awaits its units or child, whose cancel and compensation
     * take care of their own calls.
     */
    static boolean sendsRequest(StepDefinition<?> def) {
        return def.awaitsCompletion() && !def.runsUnits() && !def.startsChildTask();
    }

    /** {@link #until} for a request of step {@code def} sent (or a call started) at {@code at}. */
    static Instant sentAt(StepDefinition<?> def, Instant at) {
        return def.hasCompensation() ? at.plus(def.completeWithin()).plus(GRACE) : null;
    }

    /**
     * For a cancel found when a task is claimed again after step {@code step} awaited its completion:
     * when the request its last attempt sent can no longer be applied, read from the task's events.
     * Null if the step awaits nothing, has no compensation, or its events show no call.
     */
    static Instant awaitedUntil(StepDefinition<?> def, int step, List<TaskEvent> events) {
        if (!sendsRequest(def)) {
            return null;
        }
        TaskEvent last = null;
        for (TaskEvent e : events) {
            if (e.stepIndex() == step && LAST_CALL.contains(e.type())) {
                last = e;
            }
        }
        return last == null ? null : until(def, last);
    }
}
