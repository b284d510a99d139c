package dev.sas.core;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * Configures one step whose output is a plain string (or none), inside
 * {@link Workflow.Builder#step(String, java.util.function.Consumer)}. Set exactly one kind of work:
 * {@link #execute} (a local function), {@link #call} (a call through an {@link Agent} replying a
 * string), {@link #awaitCompletion} (a request whose reply arrives later, from anywhere) or
 * {@link #childTask} (another workflow run as a child task). For a typed output, define the step with a {@link StepRef} instead
 * ({@link Workflow.Builder#step(StepRef, java.util.function.Consumer)}). Not thread-safe.
 *
 * @param <I> the workflow's input type
 */
public final class StepBuilder<I> extends AbstractStepBuilder<I, StepBuilder<I>> {

    /** Default deadline of one attempt: 30 s. */
    public static final Duration DEFAULT_COMPLETE_WITHIN = Duration.ofSeconds(30);
    /** Default number of time-outs of one step before the task fails: 3 (see {@link #maxTimeouts(int)}). */
    public static final int DEFAULT_MAX_TIMEOUTS = 3;
    /**
     * Old name of {@link #DEFAULT_MAX_TIMEOUTS}.
     *
     * @deprecated use {@link #DEFAULT_MAX_TIMEOUTS}; it counts time-outs only
     */
    @Deprecated(since = "0.2.0", forRemoval = true)
    public static final int DEFAULT_FAILURE_THRESHOLD = DEFAULT_MAX_TIMEOUTS;

    private Step<I> step;
    private AgentCall<I, ?, ?> agentCall;
    private StepDefinition.AwaitCompletion<I> awaitCompletion;

    StepBuilder(String name) {
        super(name);
    }

    @Override
    StepBuilder<I> self() {
        return this;
    }

    /**
     * The step's work: a local function run on a scheduler thread.
     *
     * @throws NullPointerException if {@code step} is null
     */
    public StepBuilder<I> execute(Step<I> step) {
        this.step = Objects.requireNonNull(step, "step '" + name + "': execute must not be null");
        return this;
    }

    /**
     * The step's work: a call through an agent whose reply is a string, recorded as the step's
     * output. For an agent with another reply type, define the step with a {@link StepRef} of that
     * type ({@link Workflow.Builder#step(StepRef, java.util.function.Consumer)}); the ref's codec
     * stores the reply. This is deliberately the only {@code call} here, so passing an agent with
     * another reply type fails to compile with one short message.
     *
     * @throws NullPointerException if an argument is null
     */
    public <Q> StepBuilder<I> call(Agent<Q, String> agent, Function<StepContext<I>, Q> request) {
        Objects.requireNonNull(agent, "step '" + name + "': agent must not be null");
        Objects.requireNonNull(request, "step '" + name + "': request must not be null");
        this.agentCall = new AgentCall<>(agent, request, Codec.string());
        return this;
    }

    /**
     * The step's work: sends a request with {@code request} (on a scheduler thread) and completes
     * later, when its reply arrives through {@link StepCompletionClient#complete(String, Object)} from any
     * node or process; the reply text is the step's output. No thread waits meanwhile: the task rests
     * {@link TaskStatus#AWAITING_COMPLETION} until the reply or the step's deadline
     * ({@link #completeWithin}, e.g. days for a human approval). A deadline missed counts a time-out
     * and the request is sent again (same idempotency key, new token).
     *
     * @throws NullPointerException if {@code request} is null
     */
    public StepBuilder<I> awaitCompletion(CompletionRequest<I> request) {
        Objects.requireNonNull(request, "step '" + name + "': awaitCompletion request must not be null");
        this.awaitCompletion = new StepDefinition.AwaitCompletion<>(request, Codec.string());
        return this;
    }

    /**
     * The step's work: runs {@code child} as a child task, with the input {@code input} builds from
     * this step's context, and completes with the child's result: the output of the child's last
     * step becomes this step's output. The child is an ordinary task (any runtime that registered
     * {@code child} runs it) whose business key is derived from this task's id and this step's name,
     * so however often the step is started (a time-out, a dead node, a resubmit) it starts one child.
     * No thread waits meanwhile: this task rests {@link TaskStatus#AWAITING_COMPLETION} until the child
     * ends, and the supervisor completes the step then, exactly once, from any node. A child that
     * ends other than {@link TaskStatus#PROCESSED} fails this step for good (compensation follows as
     * for any step); cancelling this task, or compensating this step, cancels the child if it has not
     * ended. {@link #completeWithin} bounds how long the step waits for the child; a missed deadline
     * counts a time-out and the step is started again, finding the same child.
     *
     * @param child the workflow the child task runs
     * @param input builds the child's input from this step's context
     * @param <C> the child workflow's input type
     * @throws NullPointerException if an argument is null
     */
    public <C> StepBuilder<I> childTask(Workflow<C> child, Function<StepContext<I>, C> input) {
        Objects.requireNonNull(child, "step '" + name + "': child workflow must not be null");
        Objects.requireNonNull(input, "step '" + name + "': child input must not be null");
        this.childCall = new ChildCall<>(child, input);
        return this;
    }

    StepDefinition<I> build(int index) {
        return build(index, StepRef.of(name), step, agentCall, awaitCompletion);
    }
}
