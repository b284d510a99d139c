package dev.sas.core.spi;

import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.util.function.Function;

/**
 * The completions of steps that await one ({@code StepBuilder.awaitCompletion}) in a
 * {@link StateStore} ({@link StateStore#stepCompletions()}): the transition that makes a task await
 * its completion, and the completion that arrives (from any node or process), each fenced by the
 * attempt's lease and bounded by its deadline, kept one per attempt. The store decides nothing: the
 * transitions come from the caller's pure functions of what the store read under lock.
 *
 * <p>Times are the store's ({@link StateStore#currentTime()}), passed in by the caller.
 * Implementations are thread-safe and checked by {@code AwaitCompletionContract} in
 * {@code sas-store-contracts}.
 */
public interface StepCompletionStore {

    /**
     * Writes {@code awaiting}, the transition that makes a claimed task (PROCESSING, its step's
     * request just sent) {@link TaskStatus#AWAITING_COMPLETION} ({@link Transition.Builder#awaitCompletion()}):
     * fenced like {@link StateStore#write}; the claim is released to the pseudo-holder
     * {@link Transition#AWAITING_COMPLETION_HOLDER}, the lease and {@code completeBy} are kept. If a
     * completion of the same task, step ({@link Transition#fromStep()}) and lease was kept before
     * ({@link #acceptCompletion} answered {@link CompletionWrite.Kind#KEPT}), the store writes
     * {@code ifCompleted.apply(completion)} instead, in the same transaction, with the same fencing
     * (a holder transition under the same claim). {@code ifCompleted} is pure and cheap; it may be
     * called while the store holds the task's row locked.
     *
     * @return the outcome, the kept completion if one was applied, and the transition it is about
     * @throws NullPointerException if an argument is null
     * @throws dev.sas.core.StateStoreException if the store fails; then nothing was written
     */
    AwaitWrite awaitCompletion(Transition awaiting, Function<StepCompletion, Transition> ifCompleted, Instant now);

    /**
     * Records a completion of an awaiting step, atomically: under the task's row lock, a completion already
     * kept for the same task, step and lease answers {@link CompletionWrite.Kind#DUPLICATE}; a task that
     * is absent {@code NOT_FOUND}; at another lease or step, or in a state other than
     * {@code AWAITING_COMPLETION} and {@code PROCESSING}, {@code STALE}; with {@code completeBy} before
     * {@code now}, {@code LATE}. A {@code PROCESSING} task (its request is still being sent) keeps
     * the completion ({@code KEPT}) for {@link #awaitCompletion}. An {@code AWAITING_COMPLETION} task gets
     * {@code decide.apply(target)} written as {@link StateStore#write} would (events and outbox included) and
     * the completion kept, in one transaction ({@code APPLIED}); a transition the store cannot write
     * leaves nothing written ({@code STALE} or {@code REFUSED}). Nothing else is ever written.
     *
     * @param completion the completion, naming the attempt it answers
     * @param decide the transition to write for the task as read; pure and cheap
     * @param now the store's time, compared with {@code completeBy}
     * @throws NullPointerException if an argument is null
     * @throws dev.sas.core.StateStoreException if the store fails; then nothing was written
     */
    CompletionWrite acceptCompletion(StepCompletion completion, Function<CompletionTarget, Transition> decide,
            Instant now);
}
