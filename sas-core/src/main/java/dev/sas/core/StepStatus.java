package dev.sas.core;

/** The state of one step of a task, or of that step's compensation. */
public enum StepStatus {
    /** Not started yet. */
    PENDING,
    /** Claimed and running (or its runner died and the supervisor has not noticed yet), or awaiting its reply. */
    PROCESSING,
    /** Finished and its result recorded. */
    COMPLETED,
    /** Failed for good (non-retryable error, attempts or failure threshold exhausted). */
    FAILED,
    /** Its compensation ran. */
    COMPENSATED,
    /** Its compensation failed for good. */
    COMPENSATION_FAILED,
    /**
     * Not run: its condition ({@link AbstractStepBuilder#when}) did not hold when it came up. A
     * skipped step is never compensated.
     */
    SKIPPED,
    /** A durable timer that waits; its output is the instant it fires (database time, ISO-8601). */
    WAITING
}
