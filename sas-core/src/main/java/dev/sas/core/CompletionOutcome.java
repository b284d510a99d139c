package dev.sas.core;

/**
 * What became of a reply handed to {@link StepCompletionClient#complete(String, Object)} or
 * {@link StepCompletionClient#fail(String, String)}.
 */
public enum CompletionOutcome {
    /**
     * Accepted: the step completed with this reply (or the reply is kept and applied as soon as the
     * request's send commits).
     */
    COMPLETED,
    /**
     * Accepted: the failure was recorded as a failed attempt (retried per the step's policy, or the
     * step failed).
     */
    FAILED,
    /** The same step attempt was already answered (a duplicate): nothing changed. */
    ALREADY_COMPLETED,
    /** After the step's complete-by: rejected, nothing changed, counted. */
    LATE,
    /**
     * The token's lease or attempt is no longer the task's (taken over, retried, cancelled):
     * rejected, nothing changed, counted.
     */
    STALE,
    /** The token was signed and valid, but its task no longer exists (purged): nothing changed. */
    NOT_FOUND,
    /**
     * The token is not one the configured {@link CompletionTokenKeys} signed: forged, altered, truncated,
     * malformed, signed with a key no longer accepted, or unsigned. Refused, nothing changed; logged
     * at WARN (never the token) and counted ({@link SasMetrics#invalidCompletionTokens()}).
     */
    INVALID_TOKEN;

    /** True for {@link #COMPLETED} and {@link #FAILED}: the reply changed the task. */
    public boolean accepted() {
        return this == COMPLETED || this == FAILED;
    }
}
