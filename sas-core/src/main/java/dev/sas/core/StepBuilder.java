package dev.sas.core;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * Configures one step whose output is a plain string (or none), inside
 * {@link Workflow.Builder#step(String, java.util.function.Consumer)}. Set exactly one kind of work:
 * {@link #execute} (a local function), {@link #call} (a call through an {@link Agent} replying a
 * string) or {@link #awaitCompletion} (a request whose reply arrives later, from anywhere). For a typed output, define the step with a {@link StepRef} instead
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
    private StepDefinition.AgentCall<I, ?, ?> agentCall;
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
        this.agentCall = new StepDefinition.AgentCall<>(agent, request, Codec.string());
        return this;
    }

    /**
     * The step's work: sends a request with {@code request} (on a scheduler thread) and completes
     * later, when its reply arrives through {@link StepCompletionClient#complete(String, Object)} from any
     * node or process; the reply text is the step's output. No thread waits meanwhile: the task rests
     * {@link TaskStatus#AWAITING_REPLY} until the reply or the step's deadline
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

    StepDefinition<I> build(int index) {
        return build(index, StepRef.of(name), step, agentCall, awaitCompletion);
    }
}
