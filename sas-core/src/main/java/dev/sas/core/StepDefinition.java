package dev.sas.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * One step of a {@link Workflow}, as built by {@link StepBuilder}. Immutable and thread-safe.
 *
 * @param <I> the workflow's input type
 */
public final class StepDefinition<I> {

    private final String name;
    private final int index;
    private final Duration completeWithin;
    private final RetryPolicy retryPolicy;
    private final int failureThreshold;
    private final Compensation<I> compensation;
    private final Step<I> step;
    private final AgentCall<I, ?, ?> agentCall;

    StepDefinition(String name, int index, Duration completeWithin, RetryPolicy retryPolicy, int failureThreshold,
            Compensation<I> compensation, Step<I> step, AgentCall<I, ?, ?> agentCall) {
        this.name = name;
        this.index = index;
        this.completeWithin = completeWithin;
        this.retryPolicy = retryPolicy;
        this.failureThreshold = failureThreshold;
        this.compensation = compensation;
        this.step = step;
        this.agentCall = agentCall;
    }

    /** The step's name, unique within its workflow. */
    public String name() {
        return name;
    }

    /** The step's position, from 0. */
    public int index() {
        return index;
    }

    /** How long one attempt (and one compensation attempt) may take. */
    public Duration completeWithin() {
        return completeWithin;
    }

    /** How failed attempts are retried. */
    public RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    /** How many times the supervisor may find this step past its deadline before the task fails. */
    public int failureThreshold() {
        return failureThreshold;
    }

    /** The compensation, if the step has one. */
    public Optional<Compensation<I>> compensation() {
        return Optional.ofNullable(compensation);
    }

    /** The name of the agent this step calls, if it calls one. */
    public Optional<String> agentName() {
        return agentCall == null ? Optional.empty() : Optional.of(agentCall.agent.name());
    }

    /**
     * Starts one attempt at this step. Called by the runtime: a plain step runs on the calling
     * thread; an agent call is handed to {@code agentExecutors.apply(agentName)} and completes
     * when the agent replies.
     *
     * @return the output to record (may complete with null), or a failure
     */
    public CompletionStage<String> invoke(StepContext<I> context, Function<String, Executor> agentExecutors) {
        if (agentCall != null) {
            return agentCall.invoke(context, agentExecutors.apply(agentCall.agent.name()));
        }
        try {
            return CompletableFuture.completedFuture(step.execute(context));
        } catch (Throwable e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public String toString() {
        return "Step{" + name + ", completeWithin=" + completeWithin + ", failureThreshold=" + failureThreshold
                + (agentCall != null ? ", agent=" + agentCall.agent.name() : "") + '}';
    }

    static final class AgentCall<I, Q, R> {
        final Agent<Q, R> agent;
        final Function<StepContext<I>, Q> request;
        final Codec<R> replyCodec;

        AgentCall(Agent<Q, R> agent, Function<StepContext<I>, Q> request, Codec<R> replyCodec) {
            this.agent = Objects.requireNonNull(agent, "agent must not be null");
            this.request = Objects.requireNonNull(request, "request must not be null");
            this.replyCodec = Objects.requireNonNull(replyCodec, "replyCodec must not be null");
        }

        CompletionStage<String> invoke(StepContext<I> context, Executor executor) {
            CompletableFuture<R> reply = new CompletableFuture<>();
            try {
                executor.execute(() -> {
                    try {
                        Q payload = request.apply(context);
                        AgentRequest<Q> req = new AgentRequest<>(context.taskId(), context.stepName(),
                                context.attempt(), context.idempotencyKey(), context.completeBy(),
                                context.remaining(), payload);
                        CompletionStage<R> stage = agent.call(req);
                        if (stage == null) {
                            reply.completeExceptionally(new IllegalStateException(
                                    "agent '" + agent.name() + "' returned a null CompletionStage"));
                            return;
                        }
                        stage.whenComplete((r, e) -> {
                            if (e != null) {
                                reply.completeExceptionally(e);
                            } else {
                                reply.complete(r);
                            }
                        });
                    } catch (Throwable e) {
                        reply.completeExceptionally(e);
                    }
                });
            } catch (RuntimeException rejected) {
                reply.completeExceptionally(rejected);
            }
            return reply.thenApply(r -> r == null ? null : Step.encodeOutput(replyCodec, r, context.stepName()));
        }
    }
}
