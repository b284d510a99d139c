package dev.sas.core;

import java.util.List;

/**
 * What a runtime hears from its own client: events to hand to its listeners and work to wake its
 * scheduler for. A standalone client has none of these.
 */
interface ClientHooks {

    ClientHooks NONE = new ClientHooks() {
        @Override
        public void submitted(List<TaskEvent> received, String statusChannel, boolean dueNow, boolean inHostTransaction) {
        }

        @Override
        public void operatorAction(TaskEvent event) {
        }
    };

    /** Tasks were created (duplicates excluded). */
    void submitted(List<TaskEvent> received, String statusChannel, boolean dueNow, boolean inHostTransaction);

    /**
     * Takes room on this node to start {@code task} at once, inserted already claimed
     * ({@code ClaimedSubmits.submitClaimed}); null if the node has none to spare (busy, stopped, not
     * running the workflow, or a store that cannot). Else {@link #startReserved} must follow.
     *
     * @return the instance id to claim the task for, or null
     */
    default String reserveStart(dev.sas.core.spi.NewTask task) {
        return null;
    }

    /**
     * Ends a {@link #reserveStart reservation}: starts the task when the store inserted it claimed
     * ({@code claim} not null), else gives the room back.
     */
    default void startReserved(dev.sas.core.spi.ClaimedTask claim) {
    }

    /** An operator resubmitted or cancelled a task. */
    void operatorAction(TaskEvent event);

    /** A reply applied {@code written} (its events to hand to listeners; a task due again to wake for). */
    default void replied(dev.sas.core.spi.Transition written, List<Alert> alerts) {
    }

    /** A reply was rejected as {@link CompletionOutcome#LATE}, {@link CompletionOutcome#STALE} or {@link CompletionOutcome#INVALID_TOKEN} (counted). */
    default void completionRejected(CompletionOutcome outcome) {
    }

    /** True if this node consumes the status channel {@code name} itself (known before it registered it in the store). */
    default boolean consumesStatusChannel(String name) {
        return false;
    }
}
