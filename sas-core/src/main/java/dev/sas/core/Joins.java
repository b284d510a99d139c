package dev.sas.core;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The names a workflow's parallel steps add to it: each branch's name and the name of each
 * branch's last step, which later steps read out of the parallel step's joined output
 * ({@link JoinedOutputs}); the other branch steps' names are reserved so every name means one thing.
 * Mutable while the workflow is built, then only read; the built workflow's copy is not shared.
 */
final class Joins {

    /** Where a name finds its output: branch {@code branch} of parallel step {@code step}. */
    record Joined(int step, String branch, StepRef<?> lastStep, boolean readable) {
    }

    private final Map<String, Joined> names = new HashMap<>();

    Joins copy() {
        Joins j = new Joins();
        j.names.putAll(names);
        return j;
    }

    /** A copy with the names of the parallel steps before {@code index} only. */
    Joins copyBefore(int index) {
        Joins j = new Joins();
        names.forEach((n, joined) -> {
            if (joined.step() < index) {
                j.names.put(n, joined);
            }
        });
        return j;
    }

    /** The branch {@code name} names, if it is a readable branch name or branch's last step. */
    Optional<Joined> readable(String name) {
        Joined j = names.get(name);
        return j != null && j.readable() ? Optional.of(j) : Optional.empty();
    }

    /** The branch {@code name} is used by, if any. */
    Optional<Joined> using(String name) {
        return Optional.ofNullable(names.get(name));
    }

    /**
     * Adds the names of parallel step {@code parallel} (at {@code index}) with these branches.
     *
     * @throws IllegalArgumentException if a name is the parallel step's, is taken ({@code taken}) or is
     *     used twice
     */
    void add(String workflow, String parallel, int index, List<String> branchNames, List<Workflow<Object>> branches,
            Predicate<String> taken) {
        Map<String, Joined> added = new HashMap<>();
        for (int i = 0; i < branches.size(); i++) {
            String branch = branchNames.get(i);
            List<StepDefinition<Object>> chain = branches.get(i).steps();
            put(added, workflow, parallel, branch, new Joined(index, branch, null, true), taken);
            for (StepDefinition<Object> s : chain) {
                boolean last = s == chain.get(chain.size() - 1);
                put(added, workflow, parallel, s.name(), new Joined(index, branch, last ? s.ref() : null, last), taken);
            }
        }
        names.putAll(added);
    }

    private void put(Map<String, Joined> added, String workflow, String parallel, String n, Joined j,
            Predicate<String> taken) {
        if (n.equals(parallel) || taken.test(n) || names.containsKey(n) || added.containsKey(n)) {
            throw new IllegalArgumentException("workflow '" + workflow + "': parallel step '" + parallel + "' uses the"
                    + " name '" + n + "' (branch '" + j.branch() + "') that a step or branch of this workflow"
                    + " already has; branch names and branch steps' names must be unique in the workflow, so"
                    + " later steps can read them by name");
        }
        added.put(n, j);
    }

    /**
     * Checks a {@code reads(read)} of a step at {@code readerIndex} against the branches: false if
     * {@code read} names no readable branch output.
     *
     * @throws IllegalStateException if it names one of a later parallel step, or with another ref
     */
    boolean checkRead(String where, StepRef<?> read, int readerIndex) {
        Joined branch = readable(read.name()).orElse(null);
        if (branch == null) {
            return false;
        }
        if (branch.step() >= readerIndex) {
            throw new IllegalStateException(where + ", a branch of parallel step " + branch.step()
                    + ", which does not come before it; a step can read only earlier steps");
        }
        if (branch.lastStep() != null && !branch.lastStep().equals(read)) {
            throw new IllegalStateException(where + ", but that branch step is defined with "
                    + branch.lastStep() + "; declare and read it with the ref it was defined with");
        }
        return true;
    }
}
