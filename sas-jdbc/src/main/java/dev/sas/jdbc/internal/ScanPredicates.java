package dev.sas.jdbc.internal;

/**
 * The predicates of the store's scans that name task states: which rows a read considers, through
 * the index that serves it. They decide nothing: every row they return is decided again in Java
 * ({@code TaskDecisions}) and written fenced on what was read. With the claim's own predicate
 * ({@link Dialect#CLAIMABLE_STATES}) and the schema scripts, the only SQL of this module that names
 * a state ({@code SqlStateLiteralTest} checks it). Not API.
 */
final class ScanPredicates {

    /**
     * Unclaimed PENDING tasks due at or before the parameter. The claim's predicate first, so the claim
     * index serves it (partial on PostgreSQL).
     */
    static final String DUE_PENDING = "locked_by IS NULL AND state IN " + Dialect.CLAIMABLE_STATES
            + " AND state = 'PENDING' AND next_attempt_at <= ?";

    /** Parked tasks (the parked index). */
    static final String PARKED = "state = 'PARKED'";

    /** Unclaimed WAITING tasks not due at the parameter, through the claim's index. */
    static final String WAITING_NOT_DUE = "locked_by IS NULL AND state IN " + Dialect.CLAIMABLE_STATES
            + " AND state = 'WAITING' AND next_attempt_at > ?";

    /** As {@link #WAITING_NOT_DUE}, state first (H2 reads its claim index in order only so). */
    static final String WAITING_NOT_DUE_STATE_FIRST = "state = 'WAITING' AND locked_by IS NULL AND next_attempt_at > ?";

    /** Tasks in a final state ({@code TaskStatus.isFinal}), which retention may delete. */
    static final String FINAL_STATES = "('PROCESSED','COMPENSATED','CANCELLED')";

    private ScanPredicates() {
    }
}
