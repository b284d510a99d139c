package dev.sas.core.spi;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * Rolling deploys, as a {@link StateStore} keeps them ({@link StateStore#deployments()}): which
 * workflow versions live runtimes run (advertisements with a time-to-live), the due backlog per
 * version, and parking and unparking the tasks of versions no live runtime runs. The store decides
 * nothing: each row's change is {@link TaskDecisions#park} or {@link TaskDecisions#unpark} of what it
 * read under lock.
 *
 * <p>Times are the store's ({@link StateStore#currentTime()}), passed in by the caller.
 * Implementations are thread-safe and checked by {@code StateStoreContract} in
 * {@code sas-store-contracts}.
 */
public interface DeploymentStore {

    /**
     * Records that {@code instanceId} can run {@code runnable} until {@code now + ttl}, replacing
     * what it advertised before. Runtimes renew it on the supervisor interval, so the supervisor
     * knows which workflow versions some live runtime claims ({@link #runnableByLiveNodes}).
     *
     * @param runnable the workflow versions the runtime has registered (empty withdraws them)
     * @throws NullPointerException if an argument is null
     */
    void advertise(String instanceId, Set<WorkflowVersion> runnable, Instant now, Duration ttl);

    /** The workflow versions some runtime advertised and whose advertisement has not expired at {@code now}. */
    Set<WorkflowVersion> runnableByLiveNodes(Instant now);

    /**
     * Unclaimed {@code PENDING} tasks due at or before {@code dueBefore}, counted per workflow
     * version, at most {@code limit} versions (those due longest first). Reads only due rows
     * through the claim's index; the supervisor calls it rarely.
     */
    List<DueBacklog> dueBacklog(Instant dueBefore, int limit);

    /**
     * Parks up to {@code limit} unclaimed {@code PENDING} tasks of {@code version} due at or before
     * {@code dueBefore}: each becomes {@link TaskStatus#PARKED} with {@code reason} as its last error,
     * keeps its step, attempts and due time, and gets a {@link TaskEvent.Type#PARKED} event (message
     * {@code reason}, time {@code now}) in the same transaction. Each row is changed only if it is
     * still unclaimed and {@code PENDING} when written (a task claimed meanwhile is never touched),
     * and nothing is parked while an advertisement of {@code version} is live at {@code now}
     * ({@link #advertise}), checked in the same transaction. Reads only due rows through an index.
     *
     * @return the PARKED events recorded, one per parked task
     * @throws NullPointerException if an argument is null
     */
    List<RecordedEvent> park(WorkflowVersion version, Instant dueBefore, Instant now, String reason, int limit);

    /**
     * Makes up to {@code limit} {@link TaskStatus#PARKED} tasks of the given versions
     * {@code PENDING} again, due at {@code now} (step, attempts and failure count unchanged), each
     * with an {@link TaskEvent.Type#UNPARKED} event (message {@code message}) in the same transaction.
     * A task that left {@code PARKED} meanwhile is not touched. Reads only parked rows of those
     * versions through an index.
     *
     * @param versions the workflow versions some live runtime can run
     * @return the UNPARKED events recorded, one per task
     * @throws NullPointerException if an argument is null
     */
    List<RecordedEvent> unpark(Set<WorkflowVersion> versions, Instant now, String message, int limit);
}
