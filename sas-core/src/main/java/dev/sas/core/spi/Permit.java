package dev.sas.core.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * One call's share of a gate's capacity, leased: it counts against the gate until it is given back
 * or {@code expiresAt} passes. The runtime takes it to expire a lease past its call's deadline and
 * renews it ({@link FlowControlStore#renewPermits}) only while the call overruns that deadline, so a
 * node that is starved or dies never lets its share be reissued while the call may still run.
 * Immutable and thread-safe.
 *
 * @param id unique across the store
 * @param gate the gate it belongs to
 * @param holder the runtime holding it
 * @param probe true for a probe call while the gate's breaker is half-open
 * @param acquiredAt when it was taken
 * @param expiresAt when it stops counting unless renewed
 */
public record Permit(String id, String gate, String holder, boolean probe, Instant acquiredAt, Instant expiresAt) {

    /** @throws NullPointerException if a field is null */
    public Permit {
        Objects.requireNonNull(id, "id must not be null");
        Objects.requireNonNull(gate, "gate must not be null");
        Objects.requireNonNull(holder, "holder must not be null");
        Objects.requireNonNull(acquiredAt, "acquiredAt must not be null");
        Objects.requireNonNull(expiresAt, "expiresAt must not be null");
    }
}
