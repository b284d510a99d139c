package dev.sas.core.spi;

import dev.sas.core.StatusUpdate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * The status outbox of a {@link StateStore}: the status messages of tasks submitted with a
 * status channel, written by the store in the same transaction as each event of such a task (by
 * {@link StateStore#submit}, {@link StateStore#claim}, {@link StateStore#write} (with
 * {@link Transition#statusChannel()}), {@link DeploymentStore#park}, {@link DeploymentStore#unpark},
 * {@link StateStore#resubmit} and {@link StateStore#requestCancel}), so a message exists exactly
 * when its transition committed. Each message keeps its delivery id until it is acknowledged;
 * within a task, delivery ids increase in the order of its events.
 *
 * <p>One consumer at a time holds a channel (a lease); {@link #pending} returns the oldest
 * messages not yet acknowledged, whatever order their transactions committed in: a message whose
 * transaction committed after a later-numbered one is still returned, so none is skipped.
 * Times are the store's ({@link StateStore#currentTime()}), passed in by the caller.
 * Implementations are thread-safe and checked by {@code StateStoreContract}.
 */
public interface StatusOutbox {

    /** Records that some node consumes {@code channel} (idempotent). Registered channels are never forgotten. */
    void register(String channel, Instant now);

    /** The channels some node has registered. */
    Set<String> channels();

    /**
     * Takes or renews the lease on consuming {@code channel}: succeeds if nobody holds it,
     * {@code consumerId} holds it, or the holder's lease expired before {@code now}. Registers the
     * channel if needed.
     *
     * @return true if {@code consumerId} now holds the channel until {@code now + ttl}
     */
    boolean tryAcquire(String channel, String consumerId, Instant now, Duration ttl);

    /** Gives up the lease on {@code channel} if {@code consumerId} holds it. */
    void release(String channel, String consumerId);

    /** Up to {@code limit} unacknowledged messages of {@code channel}, lowest delivery id first. */
    List<StatusUpdate> pending(String channel, int limit);

    /**
     * Forgets the messages with these delivery ids (delivered), and records the channel's position
     * if {@code consumerId} still holds it.
     *
     * @return true if {@code consumerId} still holds the channel's lease
     */
    boolean acknowledge(String channel, String consumerId, List<Long> deliveryIds, Instant now);
}
