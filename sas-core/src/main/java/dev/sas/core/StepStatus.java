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
    COMPENSATION_FAILED
}
