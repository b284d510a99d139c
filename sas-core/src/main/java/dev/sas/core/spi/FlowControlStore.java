package dev.sas.core.spi;

import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * The shared flow-control state of agents in a {@link StateStore} ({@link StateStore#flowControl()}):
 * one gate per endpoint of an agent (its circuit breaker, rate window and counters), the permits
 * calls in flight hold through it, and waking the tasks that wait for a gate. The store keeps the
 * state and changes it atomically across the cluster; it decides nothing: every change is computed
 * by the runtime's pure function of the gate's view. A runtime whose agents have a
 * {@link dev.sas.core.FlowControl} refuses to build on a store without it.
 *
 * <p>Times are the store's ({@link StateStore#currentTime()}), passed in by the caller.
 * Implementations are thread-safe and checked by {@code AgentFlowContract} in
 * {@code sas-store-contracts}.
 */
public interface FlowControlStore {

    /**
     * Reads and changes the flow-control state of one gate (one endpoint of one agent) atomically
     * for every runtime on the store. The store locks the gate (creating it as
     * {@link GateState#initial} if it was never written), drops its permits that expired at or
     * before {@code now}, counts the live ones, hands that view to {@code decide}, and writes what
     * {@code decide} returned — the new state, a permit taken, a permit given back — in the same
     * transaction. Two changes of one gate never interleave, so a limit checked in {@code decide}
     * holds across the cluster. The store decides nothing itself; {@code decide} must be a pure,
     * quick function of its view (it runs while the gate is locked, and runs again if the store
     * retries a transaction the database aborted).
     *
     * @param gate the gate's name ({@code <agent>/<endpoint>}, at most 255 characters)
     * @param now the store's time
     * @return the result of the change that was written
     * @throws NullPointerException if an argument is null or {@code decide} returns null
     * @throws dev.sas.core.StateStoreException if the store fails; then nothing was written
     */
    <T> T changeGate(String gate, Instant now, Function<GateView, GateChange<T>> decide);

    /**
     * Extends the lease of the given permits to {@code expiresAt}. A permit that was given back,
     * or had expired at {@code now} (another runtime may already count it as free), is not renewed.
     *
     * @return how many permits were renewed
     * @throws NullPointerException if an argument is null
     * @throws dev.sas.core.StateStoreException if the store fails
     */
    int renewPermits(Collection<String> permitIds, Instant now, Instant expiresAt);

    /**
     * Makes up to {@code limit} unclaimed {@link TaskStatus#WAITING} tasks at one of {@code steps}
     * that are not due yet due now, highest priority first, then the one due first; each becomes due
     * at its submission time, so that among tasks of one priority it is claimed before those
     * submitted after it. Writes no event (the task stays WAITING). A runtime calls it when a permit
     * comes free or a breaker closes, so waiting tasks go on at once instead of polling. Reads only
     * WAITING rows through the claim's index.
     *
     * @return how many tasks were made due
     * @throws NullPointerException if an argument is null
     * @throws dev.sas.core.StateStoreException if the store fails
     */
    int wakeWaiting(Set<StepKey> steps, Instant now, int limit);

    /**
     * Every gate written so far, with its permits live at {@code now} counted, ordered by name.
     *
     * @throws NullPointerException if {@code now} is null
     * @throws dev.sas.core.StateStoreException if the store fails
     */
    List<GateView> gates(Instant now);
}
