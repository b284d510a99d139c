package dev.sas.core;

import java.util.List;

/**
 * Delivers the status messages of one status channel to where the application listens: a message
 * broker, a queue, a callback. Called by the node that holds the channel's consumer lease, on the
 * channel's own thread ({@code sas-status-<channel>}), with a batch of messages read from the
 * store's outbox in order (each task's messages in the order of its events).
 *
 * <p>Return normally only once every message of the batch is safely delivered (a broker confirmed
 * it): the store then forgets them. Throw to have the whole batch delivered again after a backoff,
 * with the same delivery ids; nothing is lost while the handler keeps failing (a broker that is
 * down), and messages that were delivered before the failure arrive twice. Implementations need
 * not be thread-safe: one thread calls them.
 */
@FunctionalInterface
public interface StatusHandler {

    /**
     * Delivers {@code messages}, oldest first.
     *
     * @throws Exception if any of them may not have been delivered; all of them are delivered again
     */
    void deliver(List<StatusUpdate> messages) throws Exception;
}
