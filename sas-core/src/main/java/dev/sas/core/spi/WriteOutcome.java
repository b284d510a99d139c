package dev.sas.core.spi;

/** What became of one {@link Transition}. */
public enum WriteOutcome {
    /** Written. */
    APPLIED,
    /** Not written: the lease moved on, the task was released, or the guard failed (fencing). */
    STALE,
    /** Not written: an operator asked to cancel, and the transition said to yield to that. */
    CANCEL_REQUESTED
}
