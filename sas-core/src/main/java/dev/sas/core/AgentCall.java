package dev.sas.core;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;

/** A call through an agent; {@code replyCodec} is null for a compensation, whose reply is ignored. */
final class AgentCall<I, Q, R> {
    final Agent<Q, R> agent;
    final Function<StepContext<I>, Q> request;
    final Codec<? super R> replyCodec;

    AgentCall(Agent<Q, R> agent, Function<StepContext<I>, Q> request, Codec<? super R> replyCodec) {
        this.agent = Objects.requireNonNull(agent, "agent must not be null");
        this.request = Objects.requireNonNull(request, "request must not be null");
        this.replyCodec = replyCodec;
    }

    CompletionStage<String> invoke(StepContext<I> context, Executor executor, String endpoint) {
        return send(context, executor, false, endpoint)
                .thenApply(r -> r == null ? null : Step.encodeOutput(replyCodec, r, context.stepName()));
    }

    /** Builds the request and calls the agent on {@code executor}; completes with its reply. */
    CompletionStage<R> send(StepContext<I> context, Executor executor, boolean compensation, String endpoint) {
        CompletableFuture<R> reply = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    Q payload = request.apply(context);
                    AgentRequest<Q> req = new AgentRequest<>(context.taskId(), context.stepName(),
                            context.attempt(), context.idempotencyKey(), context.completeBy(),
                            context.remaining(), payload, compensation, endpoint);
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
        return reply;
    }
}
