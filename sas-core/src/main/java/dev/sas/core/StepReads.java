package dev.sas.core;

import java.util.List;

/**
 * Checks, at {@link Workflow.Builder#build()}, that a step {@linkplain AbstractStepBuilder#reads reads}
 * only earlier steps (or parallel branches) of its workflow, with the refs they were defined with.
 * Stateless.
 */
final class StepReads {

    private StepReads() {
    }

    /**
     * Checks one read of {@code reader}.
     *
     * @throws IllegalStateException if {@code reader}'s {@code read} is not an earlier step of the
     *     workflow defined with that same ref
     */
    static <I> void check(String name, int version, List<StepDefinition<I>> steps, Joins joins, ForkReads fork,
            StepDefinition<I> reader, StepRef<?> read) {
        String where = "workflow '" + name + "' v" + version + ": step '" + reader.name() + "' reads step '"
                + read.name() + "' (" + read + ")";
        StepDefinition<I> target = Workflow.find(steps, read.name());
        if (target == null && joins.checkRead(where, read, reader.index())) {
            return;
        }
        if (target == null && fork != null) {
            fork.checkRead(where, read); // a unit's step reading its parent's steps before the fork
            return;
        }
        if (target == null) {
            throw new IllegalStateException(where + ", which is not a step of this workflow; steps are "
                    + Workflow.stepNames(steps) + ". Fix the ref or remove it from reads(...)");
        }
        if (target.index() >= reader.index()) {
            throw new IllegalStateException(where + ", which is " + (target == reader ? "the step itself"
                    : "step " + target.index() + ", after it") + "; a step can read only earlier steps"
                    + " (a compensation may read its own step without declaring it)");
        }
        if (!target.ref().equals(read)) {
            throw new IllegalStateException(where + ", but that step is defined with " + target.ref()
                    + " (another codec); declare and read it with the ref the step was defined with");
        }
    }
}
