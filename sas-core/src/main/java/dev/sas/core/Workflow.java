package dev.sas.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * A named, versioned sequence of steps that a task runs in order. Built once with
 * {@link #builder(String, Codec)}, validated at {@code build()}, then immutable and thread-safe.
 *
 * <pre>{@code
 * Workflow<String> greet = Workflow.builder("greet", Codec.string())
 *     .step("hello", s -> s.execute(ctx -> "hello " + ctx.input()))
 *     .build();
 * }</pre>
 *
 * @param <I> the input type, encoded with the workflow's {@link Codec}
 */
public final class Workflow<I> {

    /** Workflow and step names: letters, digits, '.', '_' and '-', 1 to 100 characters. */
    public static final Pattern NAME_PATTERN = Pattern.compile("[A-Za-z0-9._-]{1,100}");

    private final String name;
    private final int version;
    private final Codec<I> inputCodec;
    private final List<StepDefinition<I>> steps;
    private final boolean compensateOnFailure;

    private Workflow(Builder<I> b) {
        this.name = b.name;
        this.version = b.version;
        this.inputCodec = b.inputCodec;
        this.steps = List.copyOf(b.steps);
        this.compensateOnFailure = b.compensateOnFailure;
    }

    /**
     * Starts a workflow definition.
     *
     * @param name the workflow's name (see {@link #NAME_PATTERN})
     * @param inputCodec encodes the task input for the store
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} does not match {@link #NAME_PATTERN}
     */
    public static <I> Builder<I> builder(String name, Codec<I> inputCodec) {
        return new Builder<>(name, inputCodec);
    }

    /** The workflow's name. */
    public String name() {
        return name;
    }

    /** The workflow's version; tasks remember the version they were submitted with. */
    public int version() {
        return version;
    }

    /** Encodes and decodes the task input. */
    public Codec<I> inputCodec() {
        return inputCodec;
    }

    /** The steps, in order. */
    public List<StepDefinition<I>> steps() {
        return steps;
    }

    /** Whether a task that fails for good compensates its completed steps. */
    public boolean compensateOnFailure() {
        return compensateOnFailure;
    }

    /**
     * The step with this name.
     *
     * @throws IllegalArgumentException if there is none
     */
    public StepDefinition<I> step(String stepName) {
        for (StepDefinition<I> s : steps) {
            if (s.name().equals(stepName)) {
                return s;
            }
        }
        throw new IllegalArgumentException("workflow '" + name + "' v" + version + " has no step '" + stepName + "'");
    }

    @Override
    public String toString() {
        return "Workflow{" + name + " v" + version + ", steps=" + steps + '}';
    }

    static void checkName(String what, String value) {
        Objects.requireNonNull(value, what + " must not be null");
        if (!NAME_PATTERN.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " must match " + NAME_PATTERN.pattern() + ", was '" + value + "'");
        }
    }

    /**
     * Builds a {@link Workflow}. Not thread-safe; {@link #build()} copies, so reusing the builder
     * never changes a workflow already built.
     *
     * @param <I> the input type
     */
    public static final class Builder<I> {
        private final String name;
        private final Codec<I> inputCodec;
        private int version = 1;
        private boolean compensateOnFailure = true;
        private final List<StepDefinition<I>> steps = new ArrayList<>();

        private Builder(String name, Codec<I> inputCodec) {
            checkName("workflow name", name);
            this.name = name;
            this.inputCodec = Objects.requireNonNull(inputCodec, "workflow '" + name + "': inputCodec must not be null");
        }

        /**
         * The version, from 1 (the default). Bump it when steps change incompatibly and keep the
         * old version registered until its tasks have finished.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder<I> version(int version) {
            if (version < 1) {
                throw new IllegalArgumentException("workflow '" + name + "': version must be at least 1, was " + version);
            }
            this.version = version;
            return this;
        }

        /**
         * Adds a step, configured by {@code config}.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the name is invalid or already used
         * @throws IllegalStateException if the configuration is incomplete or contradictory
         */
        public Builder<I> step(String stepName, Consumer<StepBuilder<I>> config) {
            checkName("workflow '" + name + "': step name", stepName);
            Objects.requireNonNull(config, "workflow '" + name + "': step '" + stepName + "' config must not be null");
            for (StepDefinition<I> s : steps) {
                if (s.name().equals(stepName)) {
                    throw new IllegalArgumentException(
                            "workflow '" + name + "': step name '" + stepName + "' is used twice");
                }
            }
            StepBuilder<I> builder = new StepBuilder<>(stepName);
            config.accept(builder);
            steps.add(builder.build(steps.size()));
            return this;
        }

        /**
         * Whether a task that fails for good runs the compensations of its completed steps
         * (default true). Without it the task stays in {@code ERROR} for an operator.
         */
        public Builder<I> compensateOnFailure(boolean compensateOnFailure) {
            this.compensateOnFailure = compensateOnFailure;
            return this;
        }

        /**
         * The immutable workflow.
         *
         * @throws IllegalStateException if no step was added
         */
        public Workflow<I> build() {
            if (steps.isEmpty()) {
                throw new IllegalStateException("workflow '" + name + "' has no steps: add at least one with step(...)");
            }
            return new Workflow<>(this);
        }
    }
}
