package dev.sas.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One call to an {@link Agent}: the payload, the deadline of the step attempt that makes it,
 * and the idempotency key the remote service should use to apply the call once.
 *
 * @param taskId the task making the call
 * @param stepName the step making the call
 * @param attempt the step attempt, from 1
 * @param idempotencyKey stable across every attempt at this step of this task
 * @param completeBy the instant after which a reply is rejected
 * @param remaining the time left until {@code completeBy} when the call was made
 * @param payload the request
 * @param compensation true when the call undoes the step (a compensation registered with
 *     {@code compensateWith(agent, request)}), false when it is the step's own call
 * @param endpoint which of the agent's {@linkplain FlowControl#endpoints() endpoints} the call goes
 *     to: the first healthy one with capacity; {@link FlowControl#DEFAULT_ENDPOINT} for an agent
 *     that names none
 * @param <Q> the request type
 */
public record AgentRequest<Q>(
        TaskId taskId,
        String stepName,
        int attempt,
        String idempotencyKey,
        Instant completeBy,
        Duration remaining,
        Q payload,
        boolean compensation,
        String endpoint) {

    /** @throws NullPointerException if any argument but {@code payload} is null */
    public AgentRequest {
        Objects.requireNonNull(taskId, "taskId must not be null");
        Objects.requireNonNull(stepName, "stepName must not be null");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey must not be null");
        Objects.requireNonNull(completeBy, "completeBy must not be null");
        Objects.requireNonNull(remaining, "remaining must not be null");
        Objects.requireNonNull(endpoint, "endpoint must not be null");
    }

    /**
     * A request to the {@link FlowControl#DEFAULT_ENDPOINT}.
     *
     * @throws NullPointerException if any argument but {@code payload} is null
     */
    public AgentRequest(TaskId taskId, String stepName, int attempt, String idempotencyKey, Instant completeBy,
            Duration remaining, Q payload, boolean compensation) {
        this(taskId, stepName, attempt, idempotencyKey, completeBy, remaining, payload, compensation,
                FlowControl.DEFAULT_ENDPOINT);
    }

    /**
     * A request for the step's own call (not a compensation) to the {@link FlowControl#DEFAULT_ENDPOINT}.
     *
     * @throws NullPointerException if any argument but {@code payload} is null
     */
    public AgentRequest(TaskId taskId, String stepName, int attempt, String idempotencyKey, Instant completeBy,
            Duration remaining, Q payload) {
        this(taskId, stepName, attempt, idempotencyKey, completeBy, remaining, payload, false,
                FlowControl.DEFAULT_ENDPOINT);
    }
}
