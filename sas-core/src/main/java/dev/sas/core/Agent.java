package dev.sas.core;

import java.util.concurrent.CompletionStage;

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
}
