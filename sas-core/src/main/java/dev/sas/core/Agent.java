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
     * How hard the cluster may use this agent, its circuit breaker and its endpoints; by default
     * none: every call goes through at once to {@link FlowControl#DEFAULT_ENDPOINT}. Agents of the
     * same name registered in one runtime must return equal flow controls.
     */
    default FlowControl flowControl() {
        return FlowControl.none();
    }

    /**
     * Starts an agent with a retry policy or flow control of its own:
     * {@code Agent.builder("payments").flowControl(limits).call(request -> ...)}.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} does not match {@link Workflow#NAME_PATTERN}
     */
    static Builder builder(String name) {
        return new Builder(name);
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
        return builder(name).retryPolicy(retryPolicy).call(call);
    }

    /**
     * Builds an {@link Agent} from a name, optional settings and, last, the function that calls
     * the service. Not thread-safe; each {@link #call} builds a new, immutable agent.
     */
    final class Builder {
        private final String name;
        private RetryPolicy retryPolicy = RetryPolicy.defaults();
        private FlowControl flowControl = FlowControl.none();

        private Builder(String name) {
            Workflow.checkName("agent name", name);
            this.name = name;
        }

        /**
         * The retry policy of steps that call the agent and set none. Default {@link RetryPolicy#defaults()}.
         *
         * @throws NullPointerException if null
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            this.retryPolicy = Objects.requireNonNull(retryPolicy, "agent '" + name + "': retryPolicy must not be null");
            return this;
        }

        /**
         * Limits, circuit breaker and endpoints, shared by every runtime on the store. Default
         * {@link FlowControl#none()}.
         *
         * @throws NullPointerException if null
         */
        public Builder flowControl(FlowControl flowControl) {
            this.flowControl = Objects.requireNonNull(flowControl, "agent '" + name + "': flowControl must not be null");
            return this;
        }

        /**
         * The agent, calling the service through {@code call}.
         *
         * @throws NullPointerException if {@code call} is null
         */
        public <Q, R> Agent<Q, R> call(Function<AgentRequest<Q>, CompletionStage<R>> call) {
            return simple(name, retryPolicy, flowControl, call);
        }
    }

    private static <Q, R> Agent<Q, R> simple(String name, RetryPolicy retryPolicy, FlowControl flowControl,
            Function<AgentRequest<Q>, CompletionStage<R>> call) {
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
            public FlowControl flowControl() {
                return flowControl;
            }

            @Override
            public String toString() {
                return "Agent{" + name + '}';
            }
        };
    }
}
