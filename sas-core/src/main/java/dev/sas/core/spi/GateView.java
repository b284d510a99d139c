package dev.sas.core.spi;

import java.util.Objects;

/**
 * One gate as the store holds it at a given instant: its state (or {@link GateState#initial} if it
 * was never written) and its live permits counted. Immutable and thread-safe.
 *
 * @param gate the gate's name ({@code <agent>/<endpoint>})
 * @param state the stored state
 * @param exists false when the gate was never written ({@code state} is then the initial one)
 * @param permitsInUse permits not given back and not expired
 * @param probesInUse those of them taken as probes
 */
public record GateView(String gate, GateState state, boolean exists, int permitsInUse, int probesInUse) {

    /** @throws NullPointerException if {@code gate} or {@code state} is null */
    public GateView {
        Objects.requireNonNull(gate, "gate must not be null");
        Objects.requireNonNull(state, "state must not be null");
    }
}
