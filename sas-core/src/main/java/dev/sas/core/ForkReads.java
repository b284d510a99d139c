package dev.sas.core;

import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * What a unit workflow (a parallel step's branch or a fan-out's element) reads of its parent: the
 * outputs of the parent's steps (and parallel branches) before the group step that forks it, with
 * the refs they were defined with. Read-only and read from the store, one read of the parent task
 * per access: the parent rests at its group step while its units run and its earlier outputs do not
 * change, so any node that runs a unit, at any time, reads the same values. No unit row holds a copy.
 * A unit's own step or branch of the same name wins. Immutable.
 */
final class ForkReads {
    private final String workflow;
    private final String groupStep;
    private final List<StepDefinition<?>> before;
    private final Joins joins;

    private ForkReads(String workflow, String groupStep, List<StepDefinition<?>> before, Joins joins) {
        this.workflow = workflow;
        this.groupStep = groupStep;
        this.before = before;
        this.joins = joins;
    }

    /** The reads of the units of a group step about to be added to {@code steps} of {@code workflow}. */
    static ForkReads at(String workflow, String groupStep, List<? extends StepDefinition<?>> steps, Joins joins) {
        return new ForkReads(workflow, groupStep, List.copyOf(steps), joins.copyBefore(steps.size()));
    }

    /** The reads of the units of group step {@code index} of {@code steps} of {@code workflow}. */
    static ForkReads at(String workflow, List<? extends StepDefinition<?>> steps, Joins joins, int index) {
        return at(workflow, steps.get(index).name(), steps.subList(0, index), joins);
    }

    /** Whether {@code name} is a step, branch or branch's last step before the group step. */
    boolean knows(String name) {
        return find(name) != null || joins.readable(name).isPresent();
    }

    private StepDefinition<?> find(String name) {
        return before.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
    }

    /** The defining ref of {@code name} before the fork, or null for a branch name (read with any ref). */
    private StepRef<?> refOf(String name) {
        StepDefinition<?> s = find(name);
        return s != null ? s.ref() : joins.readable(name).map(Joins.Joined::lastStep).orElse(null);
    }

    /**
     * Checks that {@code ref} reads an output before the fork.
     *
     * @throws IllegalArgumentException if it does not, or was defined with another ref
     */
    void checkRef(StepRef<?> ref) {
        String why = problem(ref);
        if (why != null) {
            throw new IllegalArgumentException(why);
        }
    }

    /**
     * Checks a {@code reads(read)} of a unit step at build time ({@code where} names it).
     *
     * @throws IllegalStateException if {@code read} is no output before the fork, or has another ref
     */
    void checkRead(String where, StepRef<?> read) {
        String why = problem(read);
        if (why != null) {
            throw new IllegalStateException(where + ": " + why);
        }
    }

    private String problem(StepRef<?> ref) {
        if (!knows(ref.name())) {
            return "'" + ref.name() + "' is neither an earlier step of this unit nor a step of workflow '" + workflow
                    + "' before its group step '" + groupStep + "' (those are " + Workflow.stepNames(before)
                    + "); a parallel branch or forEach element reads only its own earlier steps and the steps"
                    + " before the fork, not later steps nor other branches";
        }
        StepRef<?> defined = refOf(ref.name());
        if (defined != null && !defined.equals(ref)) {
            return "step '" + ref.name() + "' of workflow '" + workflow + "' is defined with " + defined + ", not "
                    + ref + "; read it with the ref it was defined with";
        }
        return null;
    }

    /**
     * The recorded output {@code name} of the parent of unit {@code unitKey}, read with {@code tasks}.
     *
     * @throws IllegalStateException if the key names no parent, or the parent no longer exists
     */
    Optional<String> output(String name, String unitKey, Function<TaskId, Optional<TaskInfo>> tasks) {
        List<String> group = UnitTasks.groupOf(unitKey).orElseThrow(() -> new IllegalStateException("task with"
                + " business key '" + unitKey + "' is no unit task of workflow '" + workflow + "'; it cannot read"
                + " step '" + name + "' before the fork"));
        TaskId parentId = TaskId.of(group.get(0));
        TaskInfo parent = tasks.apply(parentId).orElseThrow(() -> new IllegalStateException("parent task " + parentId
                + " of unit '" + unitKey + "' no longer exists; cannot read its step '" + name + "'"));
        StepDefinition<?> s = find(name);
        if (s != null) {
            return Optional.ofNullable(recorded(parent, s.index()));
        }
        Joins.Joined j = joins.readable(name).orElseThrow();
        return JoinedOutputs.branch(recorded(parent, j.step()), j.branch());
    }

    private static String recorded(TaskInfo parent, int index) {
        return parent.steps().stream().filter(st -> st.index() == index && st.status() == StepStatus.COMPLETED)
                .map(TaskInfo.StepInfo::output).filter(o -> o != null).findFirst().orElse(null);
    }
}
