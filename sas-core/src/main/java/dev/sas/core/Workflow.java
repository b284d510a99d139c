package dev.sas.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntFunction;
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
 * <p>A step whose output later steps (or a task's result) read is best defined with a
 * {@link StepRef}: the ref carries the output's type and codec to the step and to every reader,
 * and {@link Builder#build()} checks the refs a step declares it {@linkplain AbstractStepBuilder#reads
 * reads}:
 *
 * <pre>{@code
 * static final StepRef<Receipt> CHARGE = StepRef.of("charge", Receipt.CODEC);
 *
 * Workflow.builder("orders", Order.CODEC)
 *     .step(CHARGE, s -> s.call(payments, ctx -> new ChargeRequest(ctx.input().amount())))
 *     .step("ship", s -> s.reads(CHARGE).execute(ctx -> ship(ctx.output(CHARGE))))
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
    private final List<StepRef<?>> refs;
    private final boolean compensateOnFailure;
    private final Map<Integer, VersionMapping> movesFrom;
    private final StepOutputs outputs;

    private Workflow(Builder<I> b) {
        this.name = b.name;
        this.version = b.version;
        this.inputCodec = b.inputCodec;
        this.steps = List.copyOf(b.steps);
        this.refs = steps.stream().<StepRef<?>>map(StepDefinition::ref).toList();
        this.compensateOnFailure = b.compensateOnFailure;
        this.movesFrom = Map.copyOf(b.movesFrom);
        this.outputs = new StepOutputs(name + "' v" + version, steps, b.joins.copy(), b.fork);
    }

    /**
     * Whether this is a unit workflow the runtime generated for a parallel branch or fan-out element: its
     * tasks never compensate on their own; the group step's compensation runs theirs ({@link Builder#parallel}).
     */
    public boolean isGroupUnit() {
        return outputs.forked();
    }

    /**
     * The recorded output named {@code name}: a step's ({@code recorded.apply(index)}), or a parallel
     * branch's, by branch name or by the name of the branch's last step, out of the parallel step's
     * joined output. Called by the runtime for {@link StepContext#output(String)}.
     *
     * @throws IllegalArgumentException if no step or branch has that name
     */
    public Optional<String> outputOf(String name, IntFunction<String> recorded) {
        return outputs.outputOf(name, recorded, n -> step(n).index());
    }

    /**
     * Checks that {@code ref} reads an output of this workflow: a step defined with it, or the last
     * step of a parallel branch defined with it (a branch's name reads with any ref).
     *
     * @throws IllegalArgumentException if it does not, naming the steps
     */
    public void checkOutputRef(StepRef<?> ref) {
        if (!outputs.checkOtherRef(ref)) {
            step(ref);
        }
    }

    /** Whether {@code name} reads a step of the parent before the group step that forked this unit workflow. */
    public boolean readsFork(String name) {
        return outputs.readsFork(name);
    }

    /**
     * The output {@code name} ({@link #readsFork}) of the parent of unit task {@code unitKey}, read with
     * {@code tasks}. Called by the runtime for {@link StepContext#output(String)}.
     *
     * @throws IllegalStateException if the parent no longer exists
     */
    public Optional<String> forkOutputOf(String name, String unitKey, Function<TaskId, Optional<TaskInfo>> tasks) {
        return outputs.forkOutputOf(name, unitKey, tasks);
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

    /** The refs of the steps, in order: each decodes its step's stored output. */
    public List<StepRef<?>> refs() {
        return refs;
    }

    /**
     * The ref of the last step, whose output is the task's result:
     * {@code workflow.lastStep().decode(storedOutput)}.
     */
    public StepRef<?> lastStep() {
        return refs.get(refs.size() - 1);
    }

    /**
     * The step defined with {@code ref} (a step defined by name has a string ref,
     * {@link StepRef#of(String)}).
     *
     * @throws NullPointerException if {@code ref} is null
     * @throws IllegalArgumentException if no step of this workflow has the ref's name, or the step
     *     with that name was defined with another ref (another codec, for example another
     *     workflow's ref)
     */
    public StepDefinition<I> step(StepRef<?> ref) {
        Objects.requireNonNull(ref, "ref must not be null");
        StepDefinition<I> def = find(steps, ref.name());
        if (def == null) {
            throw new IllegalArgumentException("workflow '" + name + "' v" + version + " has no step '" + ref.name()
                    + "' (" + ref + "); steps are " + stepNames(steps) + ". Is the ref from another workflow?");
        }
        if (!def.ref().equals(ref)) {
            throw new IllegalArgumentException("workflow '" + name + "' v" + version + ": step '" + ref.name()
                    + "' is defined with " + def.ref() + ", not " + ref + " (another codec; a ref from another"
                    + " workflow?); read it with the ref the step was defined with");
        }
        return def;
    }

    /**
     * The mapping this version declares for moving tasks of {@code oldVersion} to it
     * ({@link Builder#movesFrom}), or empty if it declares none.
     */
    public Optional<VersionMapping> movesFrom(int oldVersion) {
        return Optional.ofNullable(movesFrom.get(oldVersion));
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
        return Optional.ofNullable(find(steps, stepName)).orElseThrow(() -> new IllegalArgumentException("workflow '"
                + name + "' v" + version + " has no step '" + stepName + "'"));
    }

    @Override
    public String toString() {
        return "Workflow{" + name + " v" + version + ", steps=" + steps + '}';
    }

    static <I> StepDefinition<I> find(List<StepDefinition<I>> steps, String stepName) {
        for (StepDefinition<I> s : steps) {
            if (s.name().equals(stepName)) {
                return s;
            }
        }
        return null;
    }

    static List<String> stepNames(List<? extends StepDefinition<?>> steps) {
        return steps.stream().map(StepDefinition::name).toList();
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
        private final Map<Integer, VersionMapping> movesFrom = new TreeMap<>();
        private final Map<Integer, ParallelBuilder<I>> parallels = new TreeMap<>();
        private final Map<Integer, ForEachBuilder<I, ?>> forEaches = new TreeMap<>();
        private final Joins joins = new Joins();
        /** Set by a group step's builder: this is a unit workflow of it ({@link Workflow#isGroupUnit()}). */
        ForkReads fork;

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
            checkNew(stepName, config);
            StepBuilder<I> builder = new StepBuilder<>(stepName);
            config.accept(builder);
            steps.add(builder.build(steps.size()));
            return this;
        }

        /**
         * Adds a step defined by {@code ref}: its output has the ref's type and is stored with the
         * ref's codec; later steps read it with {@link StepContext#output(StepRef) ctx.output(ref)}.
         *
         * <pre>{@code .step(CHARGE, s -> s.call(payments, ctx -> new ChargeRequest(ctx.input().amount())))}</pre>
         *
         * @param <O> the step's output type
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the ref's name is already used by another step
         * @throws IllegalStateException if the configuration is incomplete or contradictory
         */
        public <O> Builder<I> step(StepRef<O> ref, Consumer<TypedStepBuilder<I, O>> config) {
            Objects.requireNonNull(ref, "workflow '" + name + "': step ref must not be null");
            checkNew(ref.name(), config);
            TypedStepBuilder<I, O> builder = new TypedStepBuilder<>(ref);
            config.accept(builder);
            steps.add(builder.build(steps.size()));
            return this;
        }

        /**
         * Adds a durable timer step, configured by {@code config}: the task waits, holding no thread,
         * for a duration or until an instant, measured on the database's clock (see {@link TimerBuilder}).
         *
         * <pre>{@code .timer("remind-after", t -> t.waitFor(Duration.ofDays(2)))}</pre>
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the name is invalid or already used
         * @throws IllegalStateException if the timer sets neither or both of waitFor and waitUntil
         */
        public Builder<I> timer(String stepName, Consumer<TimerBuilder<I>> config) {
            checkName("workflow '" + name + "': timer name", stepName);
            checkNew(stepName, config);
            TimerBuilder<I> builder = new TimerBuilder<>(stepName);
            config.accept(builder);
            steps.add(builder.build(steps.size()));
            return this;
        }

        /**
         * Adds a parallel step, configured by {@code config} (see {@link ParallelBuilder}): two or more
         * branches, each a chain of steps run as a task of its own on any node, joined before the next
         * step, which reads each branch's output by branch name or by the ref of the branch's last step.
         * A branch failing for good cancels the others, and the task compensates every completed step of
         * every branch, latest completion first, then the steps before this one.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if a name is invalid or already used in this workflow (branch
         *     names and branch steps' names included)
         * @throws IllegalStateException if there are fewer than two branches, a branch has no steps, or a
         *     branch's step is incomplete or contradictory
         */
        public Builder<I> parallel(String stepName, Consumer<ParallelBuilder<I>> config) {
            checkName("workflow '" + name + "': parallel step name", stepName);
            checkNew(stepName, config);
            ParallelBuilder<I> p = new ParallelBuilder<>(name, stepName);
            config.accept(p);
            ForkReads f = ForkReads.at(name, stepName, steps, joins);
            joins.add(name, stepName, steps.size(), p.branchNames(), p.branchWorkflows(version, inputCodec, f),
                    n -> find(steps, n) != null);
            parallels.put(steps.size(), p);
            steps.add(p.build(steps.size(), version, inputCodec, f));
            return this;
        }

        /**
         * Adds a fan-out step ({@link ForEachBuilder}): one step run per element of the list {@code elements}
         * computes (the same list each time for a task), at most K at once, joined in list order.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the name is invalid or already used in this workflow
         * @throws IllegalStateException if the element step is missing or its configuration is incomplete
         */
        public <E> Builder<I> forEach(String stepName, Codec<E> elementCodec, Function<StepContext<I>, List<E>> elements,
                Consumer<ForEachBuilder<I, E>> config) {
            checkName("workflow '" + name + "': forEach step name", stepName);
            checkNew(stepName, config);
            ForEachBuilder<I, E> f = new ForEachBuilder<>(name, stepName, elementCodec, elements);
            config.accept(f);
            forEaches.put(steps.size(), f);
            steps.add(f.build(steps.size(), version, ForkReads.at(name, stepName, steps, joins)));
            return this;
        }

        boolean isEmpty() {
            return steps.isEmpty();
        }

        private void checkNew(String stepName, Object config) {
            Objects.requireNonNull(config, "workflow '" + name + "': step '" + stepName + "' config must not be null");
            joins.using(stepName).ifPresent(j -> {
                throw new IllegalArgumentException("workflow '" + name + "': step name '" + stepName + "' is used by"
                        + " branch '" + j.branch() + "' of parallel step " + j.step() + "; choose another name");
            });
            StepDefinition<I> existing = find(steps, stepName);
            if (existing != null) {
                throw new IllegalArgumentException("workflow '" + name + "': step name '" + stepName
                        + "' is used twice (the first is step " + existing.index() + ", " + existing.ref() + ")");
            }
        }

        /**
         * Declares where the tasks of {@code oldVersion} continue when an operator moves them to this
         * version ({@link OperationsClient#moveVersion}): {@code mapping} names the old steps whose
         * place here has another name; every other old step continues at the step of the same name.
         *
         * <pre>{@code .version(2).movesFrom(1, m -> m.step("charge", "charge-v2"))}</pre>
         *
         * @throws NullPointerException if {@code mapping} is null
         * @throws IllegalArgumentException if {@code oldVersion} is below 1, a mapping from it was
         *     already declared, or a step is mapped twice
         */
        public Builder<I> movesFrom(int oldVersion, Consumer<VersionMapping.Builder> mapping) {
            Objects.requireNonNull(mapping, "workflow '" + name + "': movesFrom(" + oldVersion
                    + ") mapping must not be null");
            if (oldVersion < 1) {
                throw new IllegalArgumentException("workflow '" + name + "': movesFrom version must be at least 1, was "
                        + oldVersion);
            }
            if (movesFrom.containsKey(oldVersion)) {
                throw new IllegalArgumentException("workflow '" + name + "': movesFrom(" + oldVersion
                        + ") is declared twice; declare each old version's mapping once");
            }
            VersionMapping.Builder b = VersionMapping.builder(name, oldVersion);
            mapping.accept(b);
            movesFrom.put(oldVersion, b.build());
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
         * @throws IllegalStateException if no step was added, a step
         *     {@linkplain AbstractStepBuilder#reads reads} a ref that is not an earlier step of this
         *     workflow defined with that same ref, or a {@link #movesFrom} mapping is from this very
         *     version, names a step this version lacks, or maps two old steps to one step
         */
        public Workflow<I> build() {
            if (steps.isEmpty()) {
                throw new IllegalStateException("workflow '" + name + "' has no steps: add at least one with step(...)");
            }
            for (StepDefinition<I> reader : steps) {
                for (StepRef<?> read : reader.reads()) {
                    StepReads.check(name, version, steps, joins, fork, reader, read);
                }
            }
            movesFrom.values().forEach(m -> m.checkAgainst(name, version, stepNames(steps)));
            // the branches take the version set last, which may come after parallel(...)
            parallels.forEach((i, p) -> steps.set(i, p.build(i, version, inputCodec, ForkReads.at(name, steps, joins, i))));
            forEaches.forEach((i, f) -> steps.set(i, f.build(i, version, ForkReads.at(name, steps, joins, i))));
            return new Workflow<>(this);
        }
    }
}
