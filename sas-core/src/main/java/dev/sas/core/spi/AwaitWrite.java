package dev.sas.core.spi;

import java.util.Objects;

/**
 * What a store did with a transition that makes a task await a completion ({@link StepCompletionStore#awaitCompletion}).
 * Immutable.
 *
 * @param outcome the outcome of the transition written (or of the one that was not)
 * @param completion the completion kept before the transition, which was applied instead; null when the task
 *     now awaits its completion (or nothing was written)
 * @param transition the transition the outcome is about: the awaiting one, or the one the kept completion
 *     decided
 */
public record AwaitWrite(WriteOutcome outcome, StepCompletion completion, Transition transition) {

    /** @throws NullPointerException if {@code outcome} or {@code transition} is null */
    public AwaitWrite {
        Objects.requireNonNull(outcome, "outcome must not be null");
        Objects.requireNonNull(transition, "transition must not be null");
    }
}
