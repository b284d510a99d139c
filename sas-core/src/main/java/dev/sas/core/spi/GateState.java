package dev.sas.core.spi;

import dev.sas.core.CircuitBreaker;
import java.time.Instant;
import java.util.Objects;

/**
 * The stored flow-control state of one gate (one endpoint of one agent), shared by every runtime
 * on the store: its circuit breaker and counters, its rate limiter and the queue of calls waiting
 * for it. Written only through {@link FlowControlStore#changeGate}; what the fields mean is decided in
 * the runtime, the store keeps them. Immutable and thread-safe.
 *
 * @param breaker the circuit breaker's state
 * @param breakerSince when it entered that state
 * @param openUntil while {@code OPEN}, when probes may start ({@link Instant#EPOCH} otherwise)
 * @param windowStart start of the current failure-rate window
 * @param windowCalls calls counted in that window
 * @param windowFailures failed calls among them
 * @param consecutiveFailures failed calls in a row, up to the last success
 * @param probeSuccesses successful probes since the breaker became {@code HALF_OPEN}
 * @param rateNext the rate limiter's theoretical arrival time: the next call may start when this,
 *     less the burst allowance, is not after now (stores keep at least microsecond precision)
 * @param waitNext the next free slot of the queue of calls held back by the rate limit (at least
 *     microsecond precision)
 * @param heldUntil the latest time a call held back for capacity or by the breaker comes back by
 *     itself: until then some task may be waiting for this gate
 * @param avgHoldMillis the average time a permit was held, in milliseconds (0 until one was given back)
 * @param lastFailure the last failure counted, or null (cut to {@link #MAX_FAILURE_LENGTH} characters)
 * @param updatedAt when the state was last written
 */
public record GateState(
        CircuitBreaker.State breaker,
        Instant breakerSince,
        Instant openUntil,
        Instant windowStart,
        int windowCalls,
        int windowFailures,
        int consecutiveFailures,
        int probeSuccesses,
        Instant rateNext,
        Instant waitNext,
        Instant heldUntil,
        long avgHoldMillis,
        String lastFailure,
        Instant updatedAt) {

    /** Longest {@link #lastFailure()} kept, in characters. */
    public static final int MAX_FAILURE_LENGTH = 500;

    /** @throws NullPointerException if a field other than {@code lastFailure} is null */
    public GateState {
        Objects.requireNonNull(breaker, "breaker must not be null");
        Objects.requireNonNull(breakerSince, "breakerSince must not be null");
        Objects.requireNonNull(openUntil, "openUntil must not be null");
        Objects.requireNonNull(windowStart, "windowStart must not be null");
        Objects.requireNonNull(rateNext, "rateNext must not be null");
        Objects.requireNonNull(waitNext, "waitNext must not be null");
        Objects.requireNonNull(heldUntil, "heldUntil must not be null");
        Objects.requireNonNull(updatedAt, "updatedAt must not be null");
        if (lastFailure != null && lastFailure.length() > MAX_FAILURE_LENGTH) {
            // never split a surrogate pair: half of one is text no database stores as given
            int end = Character.isHighSurrogate(lastFailure.charAt(MAX_FAILURE_LENGTH - 1)) ? MAX_FAILURE_LENGTH - 1
                    : MAX_FAILURE_LENGTH;
            lastFailure = lastFailure.substring(0, end);
        }
    }

    /** A gate never written: breaker closed since {@code now}, nothing counted, nothing queued. */
    public static GateState initial(Instant now) {
        return new GateState(CircuitBreaker.State.CLOSED, now, Instant.EPOCH, now, 0, 0, 0, 0, Instant.EPOCH,
                Instant.EPOCH, Instant.EPOCH, 0, null, now);
    }
}
