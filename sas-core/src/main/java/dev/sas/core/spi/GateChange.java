package dev.sas.core.spi;

/**
 * What {@link FlowControlStore#changeGate} writes, as decided by the runtime from a {@link GateView}: a
 * new state (or none), a permit to take, a permit to give back, and the decision to hand back to
 * the caller. Build one with {@link #keep} or {@link #write}, then {@link #taking} and
 * {@link #givingBack}. Immutable and thread-safe.
 *
 * @param state the gate's new state, or null to leave it as it is
 * @param take a permit to insert, or null
 * @param giveBack the id of a permit to delete, or null
 * @param result what {@code changeGate} returns once this is written
 * @param <T> the result type
 */
public record GateChange<T>(GateState state, Permit take, String giveBack, T result) {

    /** Writes nothing; {@code changeGate} returns {@code result}. */
    public static <T> GateChange<T> keep(T result) {
        return new GateChange<>(null, null, null, result);
    }

    /** Writes {@code state}; {@code changeGate} returns {@code result}. */
    public static <T> GateChange<T> write(GateState state, T result) {
        return new GateChange<>(state, null, null, result);
    }

    /** The same change, also inserting {@code permit}. */
    public GateChange<T> taking(Permit permit) {
        return new GateChange<>(state, permit, giveBack, result);
    }

    /** The same change, also deleting the permit {@code permitId}. */
    public GateChange<T> givingBack(String permitId) {
        return new GateChange<>(state, take, permitId, result);
    }
}
