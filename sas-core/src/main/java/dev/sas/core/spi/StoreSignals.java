package dev.sas.core.spi;

import dev.sas.core.TaskId;
import java.util.function.Consumer;

/**
 * Wake-up hints a {@link StateStore} pushes from the transactions of every node (PostgreSQL
 * {@code LISTEN/NOTIFY}): work became due, a task finished, a status channel has messages. A hint is
 * sent with the commit of the transaction it is about and never before; hints can be lost (the
 * listening connection was down), so callers keep polling, only less often. Thread-safe.
 */
public interface StoreSignals {

    /** What a hint is about. */
    enum Topic {
        /**
         * Tasks became due or will be: a submit, a release, a resubmit, a cancel, an unpark. The
         * payload is the epoch millisecond at which they are due, or empty for now.
         */
        TASKS_DUE,
        /** A task {@linkplain #watch watched} reached a terminal state; the payload is its id. */
        TASK_FINISHED,
        /** A status channel has new messages (status updates); the payload is the channel's name. */
        STATUS_UPDATES
    }

    /**
     * Calls {@code listener} with the payload of every hint on {@code topic}, on the store's
     * listening thread (it must be quick: wake a thread, no store calls), and with a null payload
     * whenever hints may have been missed (the listening connection was re-established).
     *
     * @return what ends the subscription
     */
    Subscription subscribe(Topic topic, Consumer<String> listener);

    /**
     * Asks for a {@link Topic#TASK_FINISHED} hint when this task next reaches a terminal state.
     *
     * @throws dev.sas.core.StateStoreException if the store fails
     */
    void watch(TaskId taskId);

    /** True while hints are being received; while false, callers poll as if there were none. */
    boolean connected();

    /** Ends a subscription. */
    interface Subscription extends AutoCloseable {
        /** Ends it; idempotent. */
        @Override
        void close();
    }
}
