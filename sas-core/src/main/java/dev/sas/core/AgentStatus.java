package dev.sas.core;

import java.time.Instant;
import java.util.Objects;

/**
 * The shared flow-control state of one endpoint of an agent, as stored: its circuit breaker and
 * the calls in flight across the cluster. What {@link OperationsClient#agents()} shows an operator.
 * Immutable.
 *
 * @param agent the agent's name
 * @param endpoint the endpoint ({@link FlowControl#DEFAULT_ENDPOINT} for an agent that names none)
 * @param breaker the circuit breaker's state ({@code CLOSED} for an agent without one)
 * @param breakerSince when the breaker entered that state
 * @param openUntil while {@code OPEN}, when probes may start; otherwise null
 * @param callsInFlight calls holding a permit right now, on every node (probes included)
 * @param probesInFlight probe calls in flight while {@code HALF_OPEN}
 * @param callsInWindow calls counted in the breaker's current failure-rate window
 * @param failuresInWindow failed calls among them
 * @param consecutiveFailures failed calls in a row, up to the last success
 * @param lastFailure the last failure counted, or null
 * @param updatedAt when this state last changed
 */
public record AgentStatus(
        String agent,
        String endpoint,
        CircuitBreaker.State breaker,
        Instant breakerSince,
        Instant openUntil,
        int callsInFlight,
        int probesInFlight,
        int callsInWindow,
        int failuresInWindow,
        int consecutiveFailures,
        String lastFailure,
        Instant updatedAt) {

    /** @throws NullPointerException if {@code agent}, {@code endpoint} or {@code breaker} is null */
    public AgentStatus {
        Objects.requireNonNull(agent, "agent must not be null");
        Objects.requireNonNull(endpoint, "endpoint must not be null");
        Objects.requireNonNull(breaker, "breaker must not be null");
    }
}
