package dev.sas.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Configures a parallel step, inside {@link Workflow.Builder#parallel}: two or more named branches,
 * each a chain of steps with its own deadlines, retry policies, agents, flow control, conditions
 * and timers, that run at the same time (on any nodes) and are joined: the step after the parallel
 * step sees every branch's output, by branch name ({@code ctx.output("stock")}) or by the typed ref
 * of the branch's last step ({@code ctx.output(RESERVED)}). A branch step reads the outputs of the
 * task's steps before the parallel step with their refs ({@code s.reads(OPENED)}, then
 * {@code ctx.output(OPENED)}), read-only, from the store; not a later step nor another branch's.
 * Not thread-safe.
 *
 * <pre>{@code
 * .parallel("reserve-and-charge", p -> p
 *         .branch("stock", b -> b.step(RESERVED, s -> s.call(stock, ctx -> ctx.input().items())))
 *         .branch("payment", b -> b
 *                 .step("authorize", s -> s.execute(ctx -> authorize(ctx.input())))
 *                 .step(CHARGED, s -> s.call(payments, ctx -> ctx.input().amount()))))
 * }</pre>
 *
 * @param <I> the workflow's input type; every branch sees the task's input
 */
public final class ParallelBuilder<I> {

    /** Default time the join waits for every branch: 1 hour (a missed deadline starts the step again). */
    public static final Duration DEFAULT_COMPLETE_WITHIN = Duration.ofHours(1);

    /**
     * Default retries of the parallel step's compensation: up to 60 attempts, 1 s to 60 s apart. An
     * attempt fails while a branch it cancelled has not ended (the branch finishes its in-flight step,
     * within that step's deadline, first), while a branch step of unknown outcome (its request sent,
     * never answered) may still be applied, until its deadline plus one second, or when a branch step's
     * compensation fails. Units whose steps have deadlines longer than about an hour need a longer
     * {@link #compensationRetry}.
     */
    public static final RetryPolicy DEFAULT_COMPENSATION_RETRY = RetryPolicy.builder().maxAttempts(60)
            .backoff(Duration.ofSeconds(1), Duration.ofSeconds(60), 2.0).build();

    private final String workflow;
    private final String name;
    private final Map<String, Consumer<BranchBuilder<I>>> branches = new LinkedHashMap<>();
    private Duration completeWithin = DEFAULT_COMPLETE_WITHIN;
    private int maxTimeouts = StepBuilder.DEFAULT_MAX_TIMEOUTS;
    private RetryPolicy compensationRetry = DEFAULT_COMPENSATION_RETRY;

    ParallelBuilder(String workflow, String name) {
        this.workflow = workflow;
        this.name = name;
    }

    /**
     * Adds a branch: a chain of steps configured by {@code chain}, as on {@link Workflow.Builder}.
     * Branch names and their steps' names share the workflow's step names: each is used once.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the name is invalid or another branch of this step has it
     */
    public ParallelBuilder<I> branch(String branchName, Consumer<BranchBuilder<I>> chain) {
        Workflow.checkName("parallel step '" + name + "': branch name", branchName);
        Objects.requireNonNull(chain, "parallel step '" + name + "': branch '" + branchName + "' must not be null");
        if (branches.containsKey(branchName)) {
            throw new IllegalArgumentException("parallel step '" + name + "': branch name '" + branchName
                    + "' is used twice; give each branch its own name");
        }
        branches.put(branchName, chain);
        return this;
    }

    /**
     * How long the join waits for every branch, on the store's clock (default
     * {@link #DEFAULT_COMPLETE_WITHIN}). A missed deadline counts a time-out and the step starts again,
     * finding the branches it started; each branch's steps keep their own deadlines.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public ParallelBuilder<I> completeWithin(Duration completeWithin) {
        Objects.requireNonNull(completeWithin, "parallel step '" + name + "': completeWithin must not be null");
        if (completeWithin.isZero() || completeWithin.isNegative()) {
            throw new IllegalArgumentException("parallel step '" + name + "': completeWithin must be positive, was "
                    + completeWithin);
        }
        this.completeWithin = completeWithin;
        return this;
    }

    /**
     * How many times the join's deadline may pass before the task fails (default
     * {@link StepBuilder#DEFAULT_MAX_TIMEOUTS}).
     *
     * @throws IllegalArgumentException if less than 1
     */
    public ParallelBuilder<I> maxTimeouts(int maxTimeouts) {
        if (maxTimeouts < 1) {
            throw new IllegalArgumentException("parallel step '" + name + "': maxTimeouts must be at least 1, was "
                    + maxTimeouts);
        }
        this.maxTimeouts = maxTimeouts;
        return this;
    }

    /**
     * How the parallel step's compensation (which waits for the branches it cancelled, then runs the
     * compensations of their completed steps) is retried; default {@link #DEFAULT_COMPENSATION_RETRY}.
     *
     * @throws NullPointerException if null
     */
    public ParallelBuilder<I> compensationRetry(RetryPolicy compensationRetry) {
        this.compensationRetry = Objects.requireNonNull(compensationRetry, "parallel step '" + name
                + "': compensationRetry must not be null");
        return this;
    }

    /** The branches' names, in order. */
    List<String> branchNames() {
        return List.copyOf(branches.keySet());
    }

    /**
     * The unit workflows, one per branch, named {@code <workflow>.<step>.<branch>} with the parent's
     * version and input codec.
     *
     * @throws IllegalStateException if there are fewer than two branches or a branch has no steps
     */
    @SuppressWarnings("unchecked")
    List<Workflow<Object>> branchWorkflows(int version, Codec<I> codec, ForkReads fork) {
        if (branches.size() < 2) {
            throw new IllegalStateException("parallel step '" + name + "' of workflow '" + workflow + "' has "
                    + branches.size() + " branch(es); add at least two with branch(name, b -> ...), or use step(...)");
        }
        List<Workflow<Object>> list = new ArrayList<>();
        for (Map.Entry<String, Consumer<BranchBuilder<I>>> e : branches.entrySet()) {
            String unitName = workflow + "." + name + "." + e.getKey();
            if (unitName.length() > 100) {
                throw new IllegalStateException("parallel step '" + name + "', branch '" + e.getKey() + "': the branch's"
                        + " workflow name '" + unitName + "' is longer than 100 characters; shorten the workflow, step"
                        + " or branch name");
            }
            Workflow.Builder<I> b = Workflow.builder(unitName, codec).version(version);
            b.fork = Objects.requireNonNull(fork);
            e.getValue().accept(new BranchBuilder<>(b));
            if (b.isEmpty()) {
                throw new IllegalStateException("parallel step '" + name + "' of workflow '" + workflow + "': branch '"
                        + e.getKey() + "' has no steps; add at least one with b.step(...)");
            }
            list.add((Workflow<Object>) (Workflow<?>) b.build());
        }
        return list;
    }

    StepDefinition<I> build(int index, int version, Codec<I> codec, ForkReads fork) {
        List<Workflow<Object>> units = branchWorkflows(version, codec, fork);
        List<String> names = branchNames();
        ChildGroup<I> group = new ChildGroup<>(units, ends -> {
            Map<String, String> outputs = new LinkedHashMap<>();
            for (ChildGroup.Ended end : ends) {
                outputs.put(names.get(end.index()), ChildCall.result(end.task()));
            }
            return JoinedOutputs.encode(outputs);
        });
        StepBuilder<I> step = new StepBuilder<>(name);
        step.group = group;
        // the compensation proper is the group's (StepDefinition.cancelChild); this one only carries its retries
        step.completeWithin(completeWithin).maxTimeouts(maxTimeouts).compensateWith(ctx -> { })
                .compensationRetry(compensationRetry);
        return step.build(index);
    }

    /**
     * Configures one branch of a parallel step: a chain of steps, as on {@link Workflow.Builder}.
     * Not thread-safe.
     *
     * @param <I> the workflow's input type
     */
    public static final class BranchBuilder<I> {
        private final Workflow.Builder<I> chain;

        BranchBuilder(Workflow.Builder<I> chain) {
            this.chain = chain;
        }

        /**
         * Adds a step to the branch, as {@link Workflow.Builder#step(String, Consumer)}.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the name is invalid or already used in the branch
         * @throws IllegalStateException if the configuration is incomplete or contradictory
         */
        public BranchBuilder<I> step(String stepName, Consumer<StepBuilder<I>> config) {
            chain.step(stepName, config);
            return this;
        }

        /**
         * Adds a typed step to the branch, as {@link Workflow.Builder#step(StepRef, Consumer)}. When it
         * is the branch's last step, later steps of the workflow read the branch's output with its ref.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the ref's name is already used in the branch
         * @throws IllegalStateException if the configuration is incomplete or contradictory
         */
        public <O> BranchBuilder<I> step(StepRef<O> ref, Consumer<TypedStepBuilder<I, O>> config) {
            chain.step(ref, config);
            return this;
        }

        /**
         * Adds a durable timer to the branch, as {@link Workflow.Builder#timer}.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the name is invalid or already used in the branch
         * @throws IllegalStateException if the timer sets neither or both of waitFor and waitUntil
         */
        public BranchBuilder<I> timer(String stepName, Consumer<TimerBuilder<I>> config) {
            chain.timer(stepName, config);
            return this;
        }
    }
}
