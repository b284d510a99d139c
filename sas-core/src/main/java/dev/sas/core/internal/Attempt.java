package dev.sas.core.internal;

import dev.sas.core.StepContext;
import dev.sas.core.StepRef;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.Tracing;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One attempt at a step (or compensation) of a {@link TaskRun}. {@link #finish()} decides, once,
 * whether the result or the deadline got there first.
 */
final class Attempt implements StepContext<Object> {
    final TaskRun run;
    final int step;
    final String stepName;
    final boolean compensating;
    final int attemptNo;
    final Instant startedAt;
    /** Moved only while its agent call waits for a thread ({@link Admission}). */
    volatile Instant completeBy;
    private final Clock clock;
    /** Reads a task from the store: a unit's parent, for the outputs of its steps before the fork. */
    private final Function<TaskId, Optional<TaskInfo>> tasks;
    private final AtomicBoolean finished = new AtomicBoolean();
    volatile Thread thread;
    volatile Future<?> timer;
    volatile Tracing.StepTrace trace = Tracing.none().startStep(null, null);
    /** The call's permit through its agent's gate, when the agent has flow control. */
    volatile AgentGates.Call call;
    /** Its agent call's wait for a thread, when it hands one off; null otherwise. */
    volatile Admission.Ticket ticket;

    Attempt(TaskRun run, Clock clock, Function<TaskId, Optional<TaskInfo>> tasks) {
        this.tasks = tasks;
        this.run = run;
        this.step = run.currentStep;
        this.stepName = run.stepName();
        this.compensating = run.compensating();
        this.attemptNo = run.attempt;
        this.completeBy = run.completeBy;
        this.clock = clock;
        this.startedAt = clock.instant();
    }

    /** True for the first caller only: the result handler or the deadline. */
    boolean finish() {
        return finished.compareAndSet(false, true);
    }

    boolean isFinished() {
        return finished.get();
    }

    @Override
    public TaskId taskId() {
        return run.taskId;
    }

    @Override
    public String businessKey() {
        return run.businessKey;
    }

    @Override
    public String workflow() {
        return run.workflow.name();
    }

    @Override
    public String stepName() {
        return stepName;
    }

    @Override
    public int stepIndex() {
        return step;
    }

    @Override
    public int attempt() {
        return attemptNo;
    }

    @Override
    public boolean compensating() {
        return compensating;
    }

    @Override
    public Object input() {
        return run.input;
    }

    @Override
    public long lease() {
        return run.lease;
    }

    @Override
    public Instant completeBy() {
        return completeBy;
    }

    @Override
    public Duration remaining() {
        Duration d = Duration.between(clock.instant(), completeBy);
        return d.isNegative() ? Duration.ZERO : d;
    }

    @Override
    public String idempotencyKey() {
        return run.taskId.value() + ':' + stepName + (compensating ? ":compensate" : "");
    }

    @Override
    public Optional<String> output(String name) {
        if (run.workflow.readsFork(name)) {
            return run.workflow.forkOutputOf(name, run.businessKey, tasks); // one read of the parent task
        }
        return run.workflow.outputOf(name, i -> i < run.outputs.size() ? run.outputs.get(i) : null);
    }

    @Override
    public <O> Optional<O> outputIfPresent(StepRef<O> ref) {
        run.workflow.checkOutputRef(ref); // IllegalArgumentException naming workflow and ref if it reads no output of it
        return StepContext.super.outputIfPresent(ref);
    }

    @Override
    public String toString() {
        return "task " + run.taskId + " step " + stepName + (compensating ? " (compensation)" : "") + " attempt "
                + attemptNo;
    }
}
