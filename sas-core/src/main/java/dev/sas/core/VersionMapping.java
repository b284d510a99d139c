package dev.sas.core;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Where the tasks of an older version of a workflow continue when an operator moves them to the
 * version that declares this mapping ({@link Workflow.Builder#movesFrom}, then
 * {@link OperationsClient#moveVersion}): the step of each name in the old version continues at a
 * step of the new one. A step named in the mapping goes to the step it names; a step not named goes
 * to the step of the same name, if the new version has one. A task whose current step, or a step it
 * has run, has no place (or would share one with another step) is not moved.
 *
 * <pre>{@code
 * Workflow.builder("orders", Order.CODEC).version(2)
 *     .step("charge-v2", s -> s.call(payments, ...))
 *     .step("ship", s -> s.call(shipping, ...))
 *     .movesFrom(1, m -> m.step("charge", "charge-v2"))   // "ship" goes to "ship" by name
 *     .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class VersionMapping {

    private final int fromVersion;
    private final Map<String, String> steps;

    private VersionMapping(int fromVersion, Map<String, String> steps) {
        this.fromVersion = fromVersion;
        this.steps = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(steps)); // in declaration order
    }

    /** The version whose tasks this mapping moves. */
    public int fromVersion() {
        return fromVersion;
    }

    /** The steps named in the mapping, in the order declared: old step name to new step name. */
    public Map<String, String> steps() {
        return steps;
    }

    @Override
    public String toString() {
        return "VersionMapping{from v" + fromVersion + ", steps=" + steps + '}';
    }

    /**
     * Declares the steps of a {@link VersionMapping}. Not thread-safe.
     */
    public static final class Builder {
        private final String workflow;
        private final int fromVersion;
        private final Map<String, String> steps = new LinkedHashMap<>();

        Builder(String workflow, int fromVersion) {
            this.workflow = workflow;
            this.fromVersion = fromVersion;
        }

        /**
         * The old version's step {@code from} continues at this version's step {@code to}.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if a name is invalid or {@code from} is already mapped
         */
        public Builder step(String from, String to) {
            String where = "workflow '" + workflow + "': movesFrom(" + fromVersion + ")";
            Workflow.checkName(where + " old step name", from);
            Workflow.checkName(where + " new step name", to);
            String before = steps.putIfAbsent(from, to);
            if (before != null) {
                throw new IllegalArgumentException(where + ": step '" + from + "' is mapped twice (to '" + before
                        + "' and to '" + to + "'); map each old step once");
            }
            return this;
        }

        VersionMapping build() {
            return new VersionMapping(fromVersion, steps);
        }
    }

    static Builder builder(String workflow, int fromVersion) {
        return new Builder(Objects.requireNonNull(workflow), fromVersion);
    }

    /**
     * Checks this mapping, declared by {@code version} of {@code workflow} with these steps.
     *
     * @throws IllegalStateException if it maps this very version, names a step the version lacks, or
     *     maps two old steps to one step
     */
    void checkAgainst(String workflow, int version, java.util.List<String> stepNames) {
        String where = "workflow '" + workflow + "' v" + version + ": movesFrom(" + fromVersion() + ")";
        if (fromVersion() == version) {
            throw new IllegalStateException(where + " maps this version to itself; declare it on the version"
                    + " tasks move to, from an older one");
        }
        java.util.Map<String, String> sources = new java.util.HashMap<>();
        for (java.util.Map.Entry<String, String> e : steps().entrySet()) {
            if (!stepNames.contains(e.getValue())) {
                throw new IllegalStateException(where + " maps step '" + e.getKey() + "' to '" + e.getValue()
                        + "', which is not a step of this version; steps are " + stepNames);
            }
            String other = sources.putIfAbsent(e.getValue(), e.getKey());
            if (other != null) {
                throw new IllegalStateException(where + " maps both '" + other + "' and '" + e.getKey()
                        + "' to step '" + e.getValue() + "'; each step of this version takes one old step");
            }
        }
    }
}
