package dev.sas.core.spi;

import dev.sas.core.TaskEvent;

/**
 * Submission of a task already claimed by the submitting runtime, in a {@link StateStore} that can
 * ({@link StateStore#claimedSubmits()}): the insert and the claim commit together, so a task
 * submitted through a runtime's own client with room starts without a claim's round trip.
 * Implementations are thread-safe and checked by {@code StateStoreContract} in
 * {@code sas-store-contracts}.
 */
@FunctionalInterface
public interface ClaimedSubmits {

    /**
     * Inserts a task as {@link StateStore#submit} does, on its own transaction, and in the same transaction
     * claims it for {@code instanceId} as {@link StateStore#claim} at {@code task.createdAt()} would: status
     * {@code PROCESSING}, lease 1, attempt 1 at step 0, {@code completeBy} at
     * {@code createdAt + firstStepTimeout}, and its STEP_STARTED event at {@code createdAt} (after
     * the RECEIVED event; both go to the task's status channel too). The claim is
     * {@link ClaimedTask#atSubmit}. A task whose workflow and business key exist is neither written
     * nor claimed; the result carries its id with {@code created == false}.
     *
     * <p>If the caller dies after the commit, the task is an expired claim like any other once
     * {@code completeBy} passes, and a supervisor recovers it.
     *
     * @param instanceId the runtime that holds the task once this returns with {@code created}
     * @return as {@link StateStore#submit}; when {@code created}, the task is claimed
     * @throws dev.sas.core.StateStoreException if the store fails; then nothing was written
     */
    SubmitResult submitClaimed(NewTask task, TaskEvent received, String instanceId);
}
