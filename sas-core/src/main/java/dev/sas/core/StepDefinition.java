package dev.sas.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One step of a {@link Workflow}, as built by {@link StepBuilder} or {@link TypedStepBuilder}.
 * Immutable and thread-safe.
 *
 * @param <I> the workflow's input type
 */
public final class StepDefinition<I> {

    private final String name;
    private final int index;
    private final StepRef<?> ref;
    private final List<StepRef<?>> reads;
    private final Duration completeWithin;
    private final RetryPolicy retryPolicy;
    private final int maxTimeouts;
    private final Compensation<I> compensation;
    private final AgentCall<I, ?, ?> compensationCall;
    private final Duration compensateWithin;
    private final RetryPolicy compensationRetryPolicy;
    private final Step<I> step;
    private final AgentCall<I, ?, ?> agentCall;
    private final AwaitCompletion<I> awaitCompletion;
    private final ChildCall<I, ?> childCall;
    private final ChildGroup<I> group;
    private final Predicate<StepContext<I>> condition;
    private final StepTimer<I> timer;
    private final FanOutLanes.Slot slot;

    StepDefinition(AbstractStepBuilder<I, ?> b, int index, StepRef<?> ref, RetryPolicy retryPolicy,
            RetryPolicy compensationRetryPolicy, Step<I> step, AgentCall<I, ?, ?> agentCall, AwaitCompletion<I> awaitCompletion) {
        this.name = b.name;
        this.index = index;
        this.ref = ref;
        this.reads = List.copyOf(b.reads);
        this.completeWithin = b.completeWithin;
        this.retryPolicy = retryPolicy;
        this.maxTimeouts = b.maxTimeouts;
        this.compensation = b.compensation;
        this.compensationCall = b.compensationCall;
        this.compensateWithin = b.compensateWithin != null ? b.compensateWithin : b.completeWithin;
        this.compensationRetryPolicy = compensationRetryPolicy;
        this.step = step;
        this.agentCall = agentCall;
        this.awaitCompletion = awaitCompletion;
        this.childCall = b.childCall;
        this.group = b.group;
        this.condition = b.condition;
        this.timer = b.timer;
        this.slot = b.slot;
    }

    /** Whether this step runs only when a condition holds ({@link AbstractStepBuilder#when}). */
    public boolean isConditional() {
        return condition != null;
    }

    /**
     * Whether this step should run now: its condition holds, or it has none. Called by the runtime
     * when the step comes up, on a scheduler thread.
     *
     * @throws RuntimeException what the condition threw
     */
    public boolean shouldRun(StepContext<I> context) {
        return condition == null || condition.test(context);
    }

    /** Whether this step is a durable timer ({@link Workflow.Builder#timer}). */
    public boolean isTimer() {
        return timer != null;
    }

    /**
     * When this timer fires, if it starts at {@code now} (database time).
     *
     * @throws IllegalStateException if this step is not a timer
     * @throws RuntimeException what the timer's {@code waitUntil} function threw (a null instant included)
     */
    public Instant firesAt(StepContext<I> context, Instant now) {
        if (timer == null) {
            throw new IllegalStateException("step '" + name + "' is not a timer");
        }
        return timer.firesAt(context, now, name);
    }

    /**
     * Whether this step sends a request and completes later, when its reply arrives
     * ({@link StepBuilder#awaitCompletion(CompletionRequest)}).
     */
    public boolean awaitsCompletion() {
        return awaitCompletion != null;
    }

    /**
     * Whether this step runs another workflow as a child task and completes with its result
     * ({@link StepBuilder#childTask(Workflow, Function)}). Such a step also
     * {@linkplain #awaitsCompletion() awaits completion}: the child's end completes it.
     */
    public boolean startsChildTask() {
        return childCall != null || group != null || slot != null;
    }

    ChildGroup<I> group() { // a parallel or fan-out step's units, or null
        return group;
    }

    FanOutLanes.Slot slot() { // a fan-out element's turn, or null
        return slot;
    }

    /** Whether this step runs a group of units (a parallel step): a failure leaves completed units to compensate. */
    public boolean runsUnits() {
        return group != null;
    }

    /** The workflow this step runs as a child task, if it {@linkplain #startsChildTask() starts one}. */
    public Optional<Workflow<?>> childWorkflow() {
        return Optional.ofNullable(childCall == null ? null : childCall.workflow);
    }

    /**
     * Starts this step's child task through {@code client} on the calling thread, or finds the
     * one this step of this task started before (its business key is derived from the parent's
     * task id and the step's name, so it is started once however often the step is). Called by the
     * runtime.
     *
     * @return the child task's id
     * @throws IllegalStateException if the step does not start a child task
     */
    public TaskId startChild(StepContext<I> context, SasClient client) {
        if (group != null) {
            return group.start(context, client);
        }
        if (slot != null) {
            return context.taskId(); // waits for its turn: the relay lets it go on (FanOutLanes)
        }
        if (childCall == null) {
            throw new IllegalStateException("step '" + name + "' does not start a child task");
        }
        return childCall.start(context, client);
    }

    /**
     * Requests the cancel of the child task this step started, if any has not ended; the first
     * part of compensating a step that {@linkplain #startsChildTask() starts a child task} (a step
     * that does not changes nothing); a parallel step's cancels its branches, then compensates their steps.
     *
     * @throws Exception what a branch step's compensation threw; IllegalStateException while a branch runs
     */
    public void cancelChild(StepContext<I> context, SasClient client) throws Exception {
        if (group != null) {
            group.cancelAndCompensate(context, client);
        } else if (childCall != null) {
            childCall.cancel(context, client);
        }
    }

    /**
     * Sends this step's request ({@link CompletionRequest#send}) on the calling thread.
     *
     * @throws IllegalStateException if the step does not await a reply
     * @throws Exception what the request threw
     */
    public void sendRequest(StepContext<I> context, String replyToken) throws Exception {
        if (awaitCompletion == null) {
            throw new IllegalStateException("step '" + name + "' does not await a reply");
        }
        awaitCompletion.request.send(context, replyToken);
    }

    /**
     * Encodes a reply to this awaiting step with the step's codec (a string for a step defined by
     * name, the ref's codec for a typed one); a string reply to a step defined by name is stored as is.
     *
     * @throws IllegalStateException if the step does not await a reply
     * @throws IllegalArgumentException if the reply cannot be encoded with the step's codec
     */
    public String encodeReply(Object reply) {
        if (awaitCompletion == null) {
            throw new IllegalStateException("step '" + name + "' does not await a reply");
        }
        return awaitCompletion.encode(reply, name);
    }

    /**
     * {@code encoded} if this awaiting step's codec decodes it (null passes: no output).
     *
     * @throws IllegalArgumentException if the codec cannot decode it; the codec's exception is the cause
     */
    String checkEncodedReply(String encoded) {
        if (awaitCompletion == null) {
            throw new IllegalStateException("step '" + name + "' does not await a reply");
        }
        if (encoded != null) {
            try {
                awaitCompletion.codec.decode(encoded);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("reply to step '" + name + "' cannot be decoded with the step's"
                        + " codec (" + e.getClass().getName() + "); send text the step's codec encoded", e);
            }
        }
        return encoded;
    }

    /** The step's name, unique within its workflow. */
    public String name() {
        return name;
    }

    /** The step's position, from 0. */
    public int index() {
        return index;
    }

    /**
     * The ref that decodes this step's output: the one it was defined with, or for a step defined
     * by name a string ref ({@link StepRef#of(String)}).
     */
    public StepRef<?> ref() {
        return ref;
    }

    /** The earlier steps this step declared it reads (see {@link AbstractStepBuilder#reads}). */
    public List<StepRef<?>> reads() {
        return reads;
    }

    /** How long one attempt at the step may take. */
    public Duration completeWithin() {
        return completeWithin;
    }

    /** How long one attempt at the compensation may take; the step's {@link #completeWithin()} unless set. */
    public Duration compensateWithin() {
        return compensateWithin;
    }

    /** {@link #compensateWithin()} when {@code compensating}, else {@link #completeWithin()}. */
    public Duration completeWithin(boolean compensating) {
        return compensating ? compensateWithin : completeWithin;
    }

    /** How failed attempts at the step are retried. */
    public RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    /**
     * How failed compensation attempts are retried: the step's {@code compensationRetry}, else the
     * compensation agent's policy, else the step's {@link #retryPolicy()}.
     */
    public RetryPolicy compensationRetryPolicy() {
        return compensationRetryPolicy;
    }

    /** {@link #compensationRetryPolicy()} when {@code compensating}, else {@link #retryPolicy()}. */
    public RetryPolicy retryPolicy(boolean compensating) {
        return compensating ? compensationRetryPolicy : retryPolicy;
    }

    /**
     * How many attempts at this step (or its compensation) may time out before the task fails;
     * see {@link AbstractStepBuilder#maxTimeouts(int)}.
     */
    public int maxTimeouts() {
        return maxTimeouts;
    }

    /**
     * Old name of {@link #maxTimeouts()}.
     *
     * @deprecated use {@link #maxTimeouts()}
     */
    @Deprecated(since = "0.2.0", forRemoval = true)
    public int failureThreshold() {
        return maxTimeouts;
    }

    /** Whether the step has a compensation of either kind, or starts a child task (cancelled when compensated). */
    public boolean hasCompensation() {
        return compensation != null || compensationCall != null || childCall != null || group != null;
    }

    /**
     * The compensation, if the step has one. For a compensation through an agent this is a
     * blocking stand-in that calls the agent on the calling thread and waits for its reply; the
     * runtime uses {@link #compensate(StepContext, Function)} instead, which goes through the
     * agent's executor.
     */
    public Optional<Compensation<I>> compensation() {
        if (compensationCall != null) {
            AgentCall<I, ?, ?> call = compensationCall;
            return Optional.of(ctx -> {
                try {
                    call.send(ctx, Runnable::run, true, FlowControl.DEFAULT_ENDPOINT).toCompletableFuture().join();
                } catch (CompletionException e) {
                    throw e.getCause() instanceof Exception cause ? cause : e;
                }
            });
        }
        if (compensation == null && (childCall != null || group != null)) {
            // a child task step is always compensated: the runtime cancels its child first (cancelChild)
            return Optional.of(ctx -> { });
        }
        return Optional.ofNullable(compensation);
    }

    /** The name of the agent this step calls, if it calls one. */
    public Optional<String> agentName() {
        return agentCall == null ? Optional.empty() : Optional.of(agentCall.agent.name());
    }

    /** The name of the agent this step's compensation calls, if it calls one. */
    public Optional<String> compensationAgentName() {
        return compensationCall == null ? Optional.empty() : Optional.of(compensationCall.agent.name());
    }

    /** The agent this step calls, if it calls one. */
    public Optional<Agent<?, ?>> agent() {
        return agentCall == null ? Optional.empty() : Optional.of(agentCall.agent);
    }

    /** The agent this step's compensation calls, if it calls one. */
    public Optional<Agent<?, ?>> compensationAgent() {
        return compensationCall == null ? Optional.empty() : Optional.of(compensationCall.agent);
    }

    /** {@link #compensationAgent()} when {@code compensating}, else {@link #agent()}. */
    public Optional<Agent<?, ?>> agent(boolean compensating) {
        return compensating ? compensationAgent() : agent();
    }

    /**
     * Starts one attempt at this step. Called by the runtime: a plain step runs on the calling
     * thread; an agent call is handed to {@code agentExecutors.apply(agentName)} and completes
     * when the agent replies.
     *
     * @return the output to record (may complete with null), or a failure
     */
    public CompletionStage<String> invoke(StepContext<I> context, Function<String, Executor> agentExecutors) {
        return invoke(context, agentExecutors, FlowControl.DEFAULT_ENDPOINT);
    }

    /**
     * Starts one attempt at this step, like {@link #invoke(StepContext, Function)}, with an agent
     * call going to {@code endpoint} ({@link AgentRequest#endpoint()}).
     *
     * @return the output to record (may complete with null), or a failure
     */
    public CompletionStage<String> invoke(StepContext<I> context, Function<String, Executor> agentExecutors,
            String endpoint) {
        if (timer != null) {
            return CompletableFuture.failedFuture(new IllegalStateException("step '" + name + "' is a timer; it has"
                    + " no work to invoke"));
        }
        if (agentCall != null) {
            return agentCall.invoke(context, agentExecutors.apply(agentCall.agent.name()), endpoint);
        }
        try {
            return CompletableFuture.completedFuture(step.execute(context));
        } catch (Throwable e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Starts one attempt at this step's compensation. Called by the runtime: a local compensation
     * runs on the calling thread; one through an agent is handed to
     * {@code agentExecutors.apply(agentName)}, like {@link #invoke}, and completes when the agent
     * replies (the reply is ignored). A step without compensation completes at once.
     *
     * @return completes when the compensation is done, or with its failure
     */
    public CompletionStage<Void> compensate(StepContext<I> context, Function<String, Executor> agentExecutors) {
        return compensate(context, agentExecutors, FlowControl.DEFAULT_ENDPOINT);
    }

    /**
     * Starts one attempt at this step's compensation, like {@link #compensate(StepContext, Function)},
     * with an agent call going to {@code endpoint} ({@link AgentRequest#endpoint()}).
     *
     * @return completes when the compensation is done, or with its failure
     */
    public CompletionStage<Void> compensate(StepContext<I> context, Function<String, Executor> agentExecutors,
            String endpoint) {
        if (compensationCall != null) {
            return compensationCall.send(context, agentExecutors.apply(compensationCall.agent.name()), true, endpoint)
                    .thenApply(reply -> null);
        }
        try {
            if (compensation != null) {
                compensation.compensate(context);
            }
            return CompletableFuture.completedFuture(null);
        } catch (Throwable e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public String toString() {
        return "Step{" + name + ", completeWithin=" + completeWithin + ", maxTimeouts=" + maxTimeouts
                + (agentCall != null ? ", agent=" + agentCall.agent.name() : "")
                + (childCall != null ? ", child=" + childCall.workflow.name()
                        : awaitCompletion != null ? ", awaitCompletion" : "")
                + (timer != null ? ", timer" : "") + (condition != null ? ", conditional" : "")
                + (compensationCall != null ? ", compensationAgent=" + compensationCall.agent.name() : "") + '}';
    }

    /** A request whose reply arrives later through the client; {@code codec} encodes the reply. */
    static final class AwaitCompletion<I> {
        final CompletionRequest<I> request;
        final Codec<?> codec;

        AwaitCompletion(CompletionRequest<I> request, Codec<?> codec) {
            this.request = Objects.requireNonNull(request, "request must not be null");
            this.codec = Objects.requireNonNull(codec, "codec must not be null");
        }

        @SuppressWarnings("unchecked")
        String encode(Object reply, String step) {
            if (reply == null) {
                return null;
            }
            try {
                return ((Codec<Object>) codec).encode(reply);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("reply to step '" + step + "' cannot be encoded with the step's"
                        + " codec (" + e + "); pass a value of the step's output type", e);
            }
        }
    }
}
