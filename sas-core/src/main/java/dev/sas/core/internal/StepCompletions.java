package dev.sas.core.internal;

import dev.sas.core.Alert;
import dev.sas.core.Workflow;
import dev.sas.core.spi.CompletionTarget;
import dev.sas.core.spi.StepCompletion;
import dev.sas.core.spi.Transition;
import java.time.Instant;
import java.util.List;

/**
 * Decides what a reply to an awaiting step does to its task, for the client that received it: the
 * {@link TaskStateMachine} decides, as for a scheduler's own result, on the task as the store read
 * it under lock. Thread-safe. Not API.
 */
public final class StepCompletions {

    private StepCompletions() {
    }

    /**
     * What to write, and the alerts to raise once written.
     *
     * @param transition the transition
     * @param alerts alerts (an ERROR, a COMPENSATION_FAILED) stamped with the reply's time
     */
    public record Decided(Transition transition, List<Alert> alerts) {
    }

    /** The transition {@code reply} makes of {@code target}, a task of {@code workflow}. */
    public static Decided decide(CompletionTarget target, Workflow<?> workflow, StepCompletion reply) {
        Instant startedAt = target.completeBy() == null ? null
                : target.completeBy().minus(workflow.steps().get(target.currentStep()).completeWithin());
        TaskStateMachine.Decision d = TaskStateMachine.decide(TaskStateMachine.Snapshot.of(target, workflow),
                TaskStateMachine.CompletionReceived.of(reply, startedAt), reply.receivedAt());
        return new Decided(d.transition().withStatusChannel(target.statusChannel()), d.alerts());
    }
}
