package dev.sas.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What the compensation of a step of a group's unit ({@link ChildGroup}) sees: the unit task as read
 * from the store, its input, and the deadline of the parent's compensating attempt, which runs it.
 * Valid only during that run.
 */
final class UnitContext implements StepContext<Object> {
    private final TaskInfo unit;
    private final StepDefinition<Object> step;
    private final Object input;
    private final StepContext<?> parent;
    private final Workflow<Object> workflow;

    UnitContext(TaskInfo unit, Workflow<Object> workflow, StepDefinition<Object> step, Object input,
            StepContext<?> parent) {
        this.workflow = workflow;
        this.unit = unit;
        this.step = step;
        this.input = input;
        this.parent = parent;
    }

    @Override
    public TaskId taskId() {
        return unit.taskId();
    }

    @Override
    public String businessKey() {
        return unit.businessKey();
    }

    @Override
    public String workflow() {
        return unit.workflow();
    }

    @Override
    public String stepName() {
        return step.name();
    }

    @Override
    public int stepIndex() {
        return step.index();
    }

    @Override
    public int attempt() {
        return parent.attempt();
    }

    @Override
    public boolean compensating() {
        return true;
    }

    @Override
    public Object input() {
        return input;
    }

    @Override
    public long lease() {
        return parent.lease();
    }

    @Override
    public Instant completeBy() {
        return parent.completeBy();
    }

    @Override
    public Duration remaining() {
        return parent.remaining();
    }

    @Override
    public String idempotencyKey() {
        return unit.taskId().value() + ':' + step.name() + ":compensate";
    }

    @Override
    public Optional<String> output(String stepName) {
        Objects.requireNonNull(stepName, "stepName must not be null");
        if (workflow.readsFork(stepName)) {
            return parent.output(stepName); // the parent runs this compensation: its steps before the fork
        }
        return Optional.ofNullable(unit.step(stepName).output());
    }

    @Override
    public <O> Optional<O> outputIfPresent(StepRef<O> ref) {
        if (workflow.readsFork(ref.name())) {
            workflow.checkOutputRef(ref);
        }
        return StepContext.super.outputIfPresent(ref);
    }

    @Override
    public String toString() {
        return "unit task " + unit.taskId() + " step " + step.name() + " (compensation, run by its parent)";
    }
}
