package dev.sas.core.internal;

import dev.sas.core.StepDefinition;
import dev.sas.core.StepStatus;
import dev.sas.core.internal.ShapeDecisions.SkippedNotCompensated;
import dev.sas.core.internal.ShapeDecisions.StepSkipped;
import dev.sas.core.internal.ShapeDecisions.TimerFired;
import dev.sas.core.internal.ShapeDecisions.TimerStarted;
import dev.sas.core.internal.TaskStateMachine.Outcome;
import dev.sas.core.internal.TaskStateMachine.StepFailed;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.Transition;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's side of the workflow shapes: when a step comes up on a step thread, finds out
 * whether it runs at all. A conditional step whose condition does not hold is skipped; a timer
 * starts (or, past its instant, fires) instead of calling anything; a skipped step that comes up
 * for compensation is passed over. What that means is decided by the {@link TaskStateMachine}
 * ({@link ShapeDecisions}). Stateless, thread-safe.
 */
final class StepShapes {
    private static final Logger log = LoggerFactory.getLogger(StepShapes.class);

    private StepShapes() {
    }

    /**
     * The outcome to decide instead of running attempt {@code a}, or null to run the step as usual.
     * {@code now} is the database's time (the runtime's clock); a timer's instant is measured on it.
     * A condition or {@code waitUntil} that throws fails the attempt.
     */
    static Outcome instead(Attempt a, StepDefinition<Object> def, Instant now) {
        if (a.compensating) {
            return a.run.skipped.contains(a.step) ? new SkippedNotCompensated() : null;
        }
        if (!def.isConditional() && !def.isTimer()) {
            return null;
        }
        try {
            if (!def.shouldRun(a)) {
                log.debug("{}: skipped, its condition did not hold", a);
                return new StepSkipped(a.startedAt);
            }
            if (!def.isTimer()) {
                return null;
            }
            // a timer that started before keeps the instant it recorded then
            String recorded = a.step < a.run.outputs.size() ? a.run.outputs.get(a.step) : null;
            Instant firesAt = recorded != null ? Instant.parse(recorded) : toMillisUp(def.firesAt(a, now));
            log.debug("{}: timer due at {}", a, firesAt);
            return firesAt.isAfter(now) ? new TimerStarted(firesAt, a.startedAt) : new TimerFired(firesAt, a.startedAt);
        } catch (Throwable e) {
            return new StepFailed(e, a.startedAt);
        }
    }

    /**
     * A store keeps due times in milliseconds: a timer's instant is rounded up to one, so the task is
     * never due before its timer fires (and claimed, found early, and released again).
     */
    static Instant toMillisUp(Instant t) {
        Instant ms = t.truncatedTo(ChronoUnit.MILLIS);
        return ms.isBefore(t) ? ms.plusMillis(1) : ms;
    }

    /** Keeps what a written transition did to the steps of the task this claim goes on with. */
    static void applied(TaskRun run, Transition t) {
        StepUpdate u = t.step();
        if (u == null || u.compensation()) {
            return;
        }
        if (u.status() == StepStatus.SKIPPED) {
            run.skipped.add(u.index());
        } else if (u.status() == StepStatus.COMPLETED) {
            run.setOutput(u.index(), u.output());
        }
    }
}
