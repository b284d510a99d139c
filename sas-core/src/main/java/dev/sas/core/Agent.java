package dev.sas.core;

import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Wraps one remote service or resource. A workflow step calls it through
 * {@code StepBuilder.call(agent, ...)}; the runtime invokes {@link #call} on the agent's own
 * bounded executor ({@code sas-agent-<name>-N}), enforces the step's deadline, and applies the
 * agent's {@link #retryPolicy()} (unless the step sets its own). A reply that arrives after the
 * deadline, or after the supervisor has handed the step to another node, is rejected and never
 * changes state.
 *
 * <p>Implementations must be thread-safe. They should honour {@link AgentRequest#remaining()}
 * (e.g. as an HTTP timeout) and pass {@link AgentRequest#idempotencyKey()} to the service.
 *
 * @param <Q> the request type
 * @param <R> the reply type
 */
public interface Agent<Q, R> {

    /** The agent's name, used in logs, thread names and executor configuration. */
    String name();

    /**
     * Sends one request. May complete the stage on any thread. Throwing, or completing
     * exceptionally, counts as a failed attempt; {@link NonRetryableException} fails the step.
     */
    CompletionStage<R> call(AgentRequest<Q> request);

    /** The retry policy for steps that call this agent and do not set their own. */
    default RetryPolicy retryPolicy() {
        return RetryPolicy.defaults();
    }

    /**
     * An agent from a name and a function, with the default retry policy:
     * {@code Agent.of("payments", request -> paymentsApi.charge(request.payload(), request.idempotencyKey()))}.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} does not match {@link Workflow#NAME_PATTERN}
     */
    static <Q, R> Agent<Q, R> of(String name, Function<AgentRequest<Q>, CompletionStage<R>> call) {
        return of(name, RetryPolicy.defaults(), call);
    }

    /**
     * An agent from a name, a retry policy for the steps that call it, and a function.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} does not match {@link Workflow#NAME_PATTERN}
     */
    static <Q, R> Agent<Q, R> of(String name, RetryPolicy retryPolicy, Function<AgentRequest<Q>, CompletionStage<R>> call) {
        Workflow.checkName("agent name", name);
        Objects.requireNonNull(retryPolicy, "agent '" + name + "': retryPolicy must not be null");
        Objects.requireNonNull(call, "agent '" + name + "': call must not be null");
        return new Agent<>() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public CompletionStage<R> call(AgentRequest<Q> request) {
                return call.apply(request);
            }

            @Override
            public RetryPolicy retryPolicy() {
                return retryPolicy;
            }

            @Override
            public String toString() {
                return "Agent{" + name + '}';
            }
        };
    }
}
