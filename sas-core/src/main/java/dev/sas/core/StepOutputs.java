package dev.sas.core;

import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.ToIntFunction;

/**
 * Where a workflow's output names find their outputs: its own steps, the branches of its parallel
 * steps ({@link Joins}) and, for a unit workflow, its parent's steps before the fork
 * ({@link ForkReads}), in that order. Immutable.
 */
final class StepOutputs {
    private final String workflow;
    private final List<? extends StepDefinition<?>> steps;
    private final Joins joins;
    private final ForkReads fork;

    StepOutputs(String workflow, List<? extends StepDefinition<?>> steps, Joins joins, ForkReads fork) {
        this.workflow = workflow;
        this.steps = steps;
        this.joins = joins;
        this.fork = fork;
    }

    /** Whether this is a unit workflow of a group step (it reads its parent's steps before the fork). */
    boolean forked() {
        return fork != null;
    }

    private boolean own(String name) {
        return steps.stream().anyMatch(s -> s.name().equals(name));
    }

    /** Whether {@code name} reads the parent's steps before the fork: no step or branch of its own has it. */
    boolean readsFork(String name) {
        return fork != null && !own(name) && joins.readable(name).isEmpty() && fork.knows(name);
    }

    /** See {@link Workflow#outputOf}; {@code indexOf} finds an own step's index or throws. */
    Optional<String> outputOf(String name, IntFunction<String> recorded, ToIntFunction<String> indexOf) {
        Joins.Joined j = own(name) ? null : joins.readable(name).orElse(null);
        if (j == null) {
            return Optional.ofNullable(recorded.apply(indexOf.applyAsInt(name)));
        }
        return JoinedOutputs.branch(recorded.apply(j.step()), j.branch());
    }

    /**
     * Checks a ref that names no own step: a branch's or a step's before the fork.
     *
     * @return false if the ref names neither (the workflow checks it as one of its own steps)
     * @throws IllegalArgumentException if it names one, defined with another ref
     */
    boolean checkOtherRef(StepRef<?> ref) {
        if (readsFork(ref.name())) {
            fork.checkRef(ref);
            return true;
        }
        Joins.Joined j = own(ref.name()) ? null : joins.readable(ref.name()).orElse(null);
        if (j != null && j.lastStep() != null && !j.lastStep().equals(ref)) {
            throw new IllegalArgumentException("workflow '" + workflow + ": branch step '" + ref.name()
                    + "' is defined with " + j.lastStep() + ", not " + ref + "; read it with the ref it was"
                    + " defined with");
        }
        return j != null;
    }

    /** See {@link Workflow#forkOutputOf}. */
    Optional<String> forkOutputOf(String name, String unitKey, Function<TaskId, Optional<TaskInfo>> tasks) {
        return fork.output(name, unitKey, tasks);
    }
}
