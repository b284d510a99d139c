package dev.sas.core.spi;

import java.util.Objects;

/**
 * What a store did with a completion ({@link StepCompletionStore#acceptCompletion}). Immutable.
 *
 * @param kind what happened
 * @param transition for {@link Kind#APPLIED}, the transition written; otherwise null
 */
public record CompletionWrite(Kind kind, Transition transition) {

    /** @throws NullPointerException if {@code kind} is null */
    public CompletionWrite {
        Objects.requireNonNull(kind, "kind must not be null");
    }

    /** A result without a transition. */
    public static CompletionWrite of(Kind kind) {
        return new CompletionWrite(kind, null);
    }

    /** What became of a completion. */
    public enum Kind {
        /** The task awaited this attempt: the completion is kept and its transition was written. */
        APPLIED,
        /**
         * The attempt is still being sent (the task is {@code PROCESSING} with the token's lease and
         * step, before its deadline): the completion is kept and applied by the transition that would
         * have made the task await it ({@link StepCompletionStore#awaitCompletion}).
         */
        KEPT,
        /** A completion of this attempt was kept before: nothing changed. */
        DUPLICATE,
        /** The attempt's deadline has passed: nothing changed. */
        LATE,
        /** The task no longer awaits this attempt (another lease, step or state): nothing changed. */
        STALE,
        /** There is no such task. */
        NOT_FOUND,
        /** The store could not hold the transition or the completion (see the store's log): nothing changed. */
        REFUSED
    }
}
