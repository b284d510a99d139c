package dev.sas.core;

import java.util.Objects;
import java.util.function.Function;

/**
 * Configures one step defined by a {@link StepRef}, inside
 * {@link Workflow.Builder#step(StepRef, java.util.function.Consumer)}: its output has the ref's
 * type and is encoded with the ref's codec, so neither is repeated here. Set exactly one kind of
 * work: {@link #execute} (a local function returning the output), {@link #call} (a call through
 * an {@link Agent} whose reply is the output), {@link #awaitCompletion} (a request whose reply, arriving
 * later from anywhere, is the output) or {@link #childTask} (another workflow run as a child task,
 * whose result is the output). Not thread-safe.
 *
 * <pre>{@code
 * .step(CHARGE, s -> s.call(payments, ctx -> new ChargeRequest(ctx.input().amount())))
 * }</pre>
 *
 * @param <I> the workflow's input type
 * @param <O> the step's output type
 */
public final class TypedStepBuilder<I, O> extends AbstractStepBuilder<I, TypedStepBuilder<I, O>> {

    private final StepRef<O> ref;
    private Step<I> step;
    private AgentCall<I, ?, ?> agentCall;
    private StepDefinition.AwaitCompletion<I> awaitCompletion;

    TypedStepBuilder(StepRef<O> ref) {
        super(ref.name());
        this.ref = ref;
    }

    @Override
    TypedStepBuilder<I, O> self() {
        return this;
    }

    /**
     * The step's work: a local function run on a scheduler thread, returning the output (or null),
     * which is encoded with the ref's codec. An encoding failure fails the step without retry.
     *
     * @throws NullPointerException if {@code work} is null
     */
    public TypedStepBuilder<I, O> execute(Step.TypedStep<I, O> work) {
        Objects.requireNonNull(work, "step '" + name + "': execute must not be null");
        this.step = Step.typed(ref.codec(), work);
        return this;
    }

    /**
     * The step's work: a call through {@code agent}, with the request built from the context. The
     * agent's reply is the step's output, encoded with the ref's codec; an agent whose reply type is
     * not the ref's type does not compile.
     *
     * @param <Q> the agent's request type
     * @throws NullPointerException if an argument is null
     */
    public <Q> TypedStepBuilder<I, O> call(Agent<Q, ? extends O> agent, Function<StepContext<I>, Q> request) {
        Objects.requireNonNull(agent, "step '" + name + "': agent must not be null");
        Objects.requireNonNull(request, "step '" + name + "': request must not be null");
        this.agentCall = new AgentCall<>(agent, request, ref.codec());
        return this;
    }

    /**
     * The step's work: sends a request with {@code request} (on a scheduler thread) and completes
     * later, when its reply arrives through {@link StepCompletionClient#complete(String, Object)} from any
     * node or process; the reply, encoded with the ref's codec, is the step's output. No thread
     * waits meanwhile: the task rests {@link TaskStatus#AWAITING_COMPLETION} until the reply or the
     * step's deadline ({@link #completeWithin}). A deadline missed counts a time-out and the request
     * is sent again (same idempotency key, new token).
     *
     * @throws NullPointerException if {@code request} is null
     */
    public TypedStepBuilder<I, O> awaitCompletion(CompletionRequest<I> request) {
        Objects.requireNonNull(request, "step '" + name + "': awaitCompletion request must not be null");
        this.awaitCompletion = new StepDefinition.AwaitCompletion<>(request, ref.codec());
        return this;
    }

    /**
     * The step's work: runs {@code child} as a child task and completes with its result, as
     * {@link StepBuilder#childTask(Workflow, Function)} does; the output of the child's last step,
     * decoded with this ref's codec, is this step's output (a child whose last output the codec
     * cannot decode fails this step for good, naming the codec's exception).
     *
     * @param child the workflow the child task runs
     * @param input builds the child's input from this step's context
     * @param <C> the child workflow's input type
     * @throws NullPointerException if an argument is null
     */
    public <C> TypedStepBuilder<I, O> childTask(Workflow<C> child, Function<StepContext<I>, C> input) {
        Objects.requireNonNull(child, "step '" + name + "': child workflow must not be null");
        Objects.requireNonNull(input, "step '" + name + "': child input must not be null");
        this.childCall = new ChildCall<>(child, input);
        return this;
    }

    StepDefinition<I> build(int index) {
        return build(index, ref, step, agentCall, awaitCompletion);
    }
}
