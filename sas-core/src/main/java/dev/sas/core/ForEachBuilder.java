package dev.sas.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Configures a fan-out step, inside {@link Workflow.Builder#forEach}: one step definition run once
 * per element of a list computed from the task's input and earlier outputs, at most
 * {@link #concurrency} elements at once, joined into one output that holds every element's result in
 * list order ({@link ForEachResults}). Each element is its own unit task (durable, fenced, retried
 * and deadline-bounded like any task, on any node) whose step sees the element as
 * {@code ctx.input()}, reads the outputs of the task's steps before the fan-out step with their refs
 * ({@code ctx.output(OPENED)}, read-only, from the store: no element row holds a copy) and has its own
 * idempotency key ({@code ctx.idempotencyKey()}). What the step
 * does when an element fails for good is {@link #onFailure}. Not thread-safe.
 *
 * <pre>{@code
 * .forEach("ship-parcels", Parcel.CODEC, ctx -> ctx.input().parcels(), each -> each
 *         .step("ship", s -> s.execute(ctx -> courier.ship(ctx.input(), ctx.idempotencyKey()))
 *                 .completeWithin(Duration.ofMinutes(2))
 *                 .compensateWith(ctx -> courier.recall(ctx.input())))
 *         .concurrency(16)
 *         .onFailure(ForEachFailure.FAIL_AND_COMPENSATE_ALL))
 * }</pre>
 *
 * @param <I> the workflow's input type
 * @param <E> the type of the list's elements, each one element step's input
 */
public final class ForEachBuilder<I, E> {

    /** Default number of elements running at once: 16. */
    public static final int DEFAULT_CONCURRENCY = 16;
    /** Most elements running at once: 1,000. */
    public static final int MAX_CONCURRENCY = 1_000;
    /** Most elements in one fan-out: 10,000 (a longer list fails the step for good, naming its size). */
    public static final int MAX_ELEMENTS = 10_000;
    /** Default time the join waits for every element: 1 hour (a missed deadline starts the step again). */
    public static final Duration DEFAULT_COMPLETE_WITHIN = Duration.ofHours(1);
    /** The name of the unit workflow's first step, where an element waits for its turn. */
    static final String SLOT_STEP = "wait-for-slot";

    private final String workflow;
    private final String name;
    private final Codec<E> elementCodec;
    private final Function<StepContext<I>, List<E>> elements;
    private String elementStep;
    private Consumer<StepBuilder<E>> elementConfig;
    private int concurrency = DEFAULT_CONCURRENCY;
    private Duration completeWithin = DEFAULT_COMPLETE_WITHIN;
    private int maxTimeouts = StepBuilder.DEFAULT_MAX_TIMEOUTS;
    private ForEachFailure onFailure = ForEachFailure.FAIL_AND_COMPENSATE_ALL;
    private RetryPolicy compensationRetry = ParallelBuilder.DEFAULT_COMPENSATION_RETRY;

    ForEachBuilder(String workflow, String name, Codec<E> elementCodec, Function<StepContext<I>, List<E>> elements) {
        this.workflow = workflow;
        this.name = name;
        this.elementCodec = Objects.requireNonNull(elementCodec, "forEach step '" + name + "': elementCodec must not be null");
        this.elements = Objects.requireNonNull(elements, "forEach step '" + name + "': elements must not be null");
    }

    /**
     * The step run for each element, configured as on {@link Workflow.Builder#step(String, Consumer)}
     * ({@code execute}, {@code call}, deadlines, retries, compensation, ...); {@code ctx.input()} is
     * the element. Set exactly once.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the name is invalid or is {@value #SLOT_STEP}
     * @throws IllegalStateException if the element step was set before
     */
    public ForEachBuilder<I, E> step(String stepName, Consumer<StepBuilder<E>> config) {
        Workflow.checkName("forEach step '" + name + "': element step name", stepName);
        Objects.requireNonNull(config, "forEach step '" + name + "': element step config must not be null");
        if (SLOT_STEP.equals(stepName)) {
            throw new IllegalArgumentException("forEach step '" + name + "': '" + SLOT_STEP + "' is the name of the"
                    + " step where an element waits for its turn; choose another name");
        }
        if (elementStep != null) {
            throw new IllegalStateException("forEach step '" + name + "': the element step is set twice ('"
                    + elementStep + "' and '" + stepName + "'); a forEach runs one step per element");
        }
        this.elementStep = stepName;
        this.elementConfig = config;
        return this;
    }

    /**
     * How many elements run at once, at most, across every node (default {@value #DEFAULT_CONCURRENCY});
     * the next element starts when one ends.
     *
     * @throws IllegalArgumentException if not between 1 and {@value #MAX_CONCURRENCY}
     */
    public ForEachBuilder<I, E> concurrency(int concurrency) {
        if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
            throw new IllegalArgumentException("forEach step '" + name + "': concurrency must be between 1 and "
                    + MAX_CONCURRENCY + ", was " + concurrency);
        }
        this.concurrency = concurrency;
        return this;
    }

    /**
     * What an element that fails for good does (default {@link ForEachFailure#FAIL_AND_COMPENSATE_ALL}).
     *
     * @throws NullPointerException if null
     */
    public ForEachBuilder<I, E> onFailure(ForEachFailure policy) {
        this.onFailure = Objects.requireNonNull(policy, "forEach step '" + name + "': onFailure must not be null");
        return this;
    }

    /**
     * How long the join waits for every element, on the store's clock (default
     * {@link #DEFAULT_COMPLETE_WITHIN}); each element's step keeps its own deadline. A missed deadline
     * counts a time-out and the step starts again, finding the elements it started.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public ForEachBuilder<I, E> completeWithin(Duration completeWithin) {
        Objects.requireNonNull(completeWithin, "forEach step '" + name + "': completeWithin must not be null");
        if (completeWithin.isZero() || completeWithin.isNegative()) {
            throw new IllegalArgumentException("forEach step '" + name + "': completeWithin must be positive, was "
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
    public ForEachBuilder<I, E> maxTimeouts(int maxTimeouts) {
        if (maxTimeouts < 1) {
            throw new IllegalArgumentException("forEach step '" + name + "': maxTimeouts must be at least 1, was "
                    + maxTimeouts);
        }
        this.maxTimeouts = maxTimeouts;
        return this;
    }

    /**
     * How the fan-out step's compensation (which waits for the elements it cancelled, then runs the
     * compensations of their completed steps, latest first) is retried; default
     * {@link ParallelBuilder#DEFAULT_COMPENSATION_RETRY}.
     *
     * @throws NullPointerException if null
     */
    public ForEachBuilder<I, E> compensationRetry(RetryPolicy compensationRetry) {
        this.compensationRetry = Objects.requireNonNull(compensationRetry, "forEach step '" + name
                + "': compensationRetry must not be null");
        return this;
    }

    /**
     * The unit workflow every element runs as, {@code <workflow>.<step>.each}: the step where an
     * element beyond the first {@code concurrency} waits for its turn (holding nothing), then the
     * element step.
     *
     * @throws IllegalStateException if the element step is missing or the name is too long
     */
    @SuppressWarnings("unchecked")
    Workflow<Object> unitWorkflow(int version, ForkReads fork) {
        if (elementStep == null) {
            throw new IllegalStateException("forEach step '" + name + "' of workflow '" + workflow + "' has no element"
                    + " step; set one with each.step(name, s -> s.execute(ctx -> ...))");
        }
        String unitName = workflow + "." + name + ".each";
        if (unitName.length() > 100) {
            throw new IllegalStateException("forEach step '" + name + "': the element workflow name '" + unitName
                    + "' is longer than 100 characters; shorten the workflow or step name");
        }
        int k = concurrency;
        Workflow.Builder<E> b = Workflow.builder(unitName, elementCodec).version(version);
        b.fork = Objects.requireNonNull(fork);
        Workflow<E> unit = b
                .step(SLOT_STEP, s -> {
                    s.when(ctx -> FanOutLanes.index(ctx.businessKey()) >= k);
                    s.slot = new FanOutLanes.Slot(k, onFailure == ForEachFailure.COLLECT_FAILURES);
                    s.completeWithin(completeWithin).maxTimeouts(maxTimeouts);
                })
                .step(elementStep, elementConfig)
                .build();
        return (Workflow<Object>) (Workflow<?>) unit;
    }

    StepDefinition<I> build(int index, int version, ForkReads fork) {
        Workflow<Object> unit = unitWorkflow(version, fork);
        String step = name;
        ChildGroup<I> group = new ChildGroup<>(ctx -> {
            List<E> list = elements.apply(ctx);
            if (list == null) {
                throw new NonRetryableException("forEach step '" + step + "': the elements function returned null");
            }
            if (list.size() > MAX_ELEMENTS) {
                throw new NonRetryableException("forEach step '" + step + "': " + list.size() + " elements, more than "
                        + MAX_ELEMENTS + "; split the work into several tasks");
            }
            List<ChildGroup.Unit> units = new ArrayList<>(list.size());
            for (int i = 0; i < list.size(); i++) {
                units.add(new ChildGroup.Unit("#" + i, unit, list.get(i)));
            }
            return units;
        }, i -> unit, ends -> {
            List<ForEachResults.Element> results = new ArrayList<>(ends.size());
            for (ChildGroup.Ended end : ends) {
                results.add(end.task().status() == TaskStatus.PROCESSED
                        ? new ForEachResults.Element(end.index(), true, ChildCall.result(end.task()), null)
                        : new ForEachResults.Element(end.index(), false, null, ChildCall.failure(end.task())));
            }
            return ForEachResults.encode(results);
        }, onFailure == ForEachFailure.COLLECT_FAILURES, unit);
        StepBuilder<I> s = new StepBuilder<>(name);
        s.group = group;
        // the compensation proper is the group's (StepDefinition.cancelChild); this one only carries its retries
        s.completeWithin(completeWithin).maxTimeouts(maxTimeouts).compensateWith(ctx -> { })
                .compensationRetry(compensationRetry);
        return s.build(index);
    }
}
