package dev.sas.core.internal;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ClaimedTask;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A task this runtime holds, from its claim until it is released. Touched by one thread at a
 * time (claim, step thread, recorder callback hand it on in turn).
 */
final class TaskRun {
    final TaskId taskId;
    final String businessKey;
    final String statusChannel;
    final Workflow<Object> workflow;
    final Object input;
    final long lease;
    TaskStatus status;
    int currentStep;
    int attempt;
    int failureCount;
    /** Volatile: {@link Admission} moves it from another thread while the task waits for a thread. */
    volatile Instant completeBy;
    boolean cancelRequested;
    final List<String> outputs;
    /** Steps recorded SKIPPED (never compensated); this claim adds the ones it skips. */
    final Set<Integer> skipped;
    final String traceContext;

    @SuppressWarnings("unchecked")
    TaskRun(ClaimedTask c, Workflow<?> workflow, Object input) {
        this.taskId = c.taskId();
        this.businessKey = c.businessKey();
        this.statusChannel = c.statusChannel();
        this.workflow = (Workflow<Object>) workflow;
        this.input = input;
        this.lease = c.lease();
        this.status = c.status();
        this.currentStep = c.currentStep();
        this.attempt = c.attempt();
        this.failureCount = c.failureCount();
        this.completeBy = c.completeBy();
        this.cancelRequested = c.cancelRequested();
        this.outputs = new ArrayList<>(c.outputs());
        this.skipped = new HashSet<>(c.skippedSteps());
        this.traceContext = c.traceContext();
    }

    boolean compensating() {
        return status == TaskStatus.COMPENSATING;
    }

    String stepName() {
        return workflow.steps().get(currentStep).name();
    }

    void setOutput(int index, String output) {
        while (outputs.size() <= index) {
            outputs.add(null);
        }
        outputs.set(index, output);
    }

    /** The highest step at or below {@code from} that has a compensation, or -1. */
    static int lastCompensable(Workflow<?> workflow, int from) {
        return lastCompensable(workflow, from, Set.of());
    }

    /** The highest step at or below {@code from} that has a compensation and was not skipped, or -1. */
    static int lastCompensable(Workflow<?> workflow, int from, Set<Integer> skipped) {
        if (workflow.isGroupUnit()) {
            return -1; // a parallel branch's steps are compensated by the parallel step, in order across branches
        }
        for (int i = Math.min(from, workflow.steps().size() - 1); i >= 0; i--) {
            if (workflow.steps().get(i).compensation().isPresent() && !skipped.contains(i)) {
                return i;
            }
        }
        return -1;
    }
}
