package dev.sas.jdbc.internal;

import dev.sas.core.TaskStatus;

/**
 * A task row as it is right after a claim (lease, attempt, lock and deadline already advanced).
 * Times are epoch milliseconds.
 */
record ClaimRow(
        String taskId,
        String workflow,
        int workflowVersion,
        String businessKey,
        TaskStatus status,
        int priority,
        long lease,
        int currentStep,
        String currentStepName,
        int attempt,
        int failureCount,
        long completeBy,
        long nextAttemptAt,
        boolean cancelRequested,
        String input,
        String statusChannel,
        long createdAt,
        String traceContext) {

    /** Claim order: highest priority first, then longest due. */
    static final java.util.Comparator<ClaimRow> CLAIM_ORDER = java.util.Comparator
            .comparingInt(ClaimRow::priority).reversed().thenComparingLong(ClaimRow::nextAttemptAt);

    /** Columns a dialect selects (or returns) to build a ClaimRow with {@link #map}. */
    static final String COLUMNS = "task_id, workflow, workflow_version, business_key, state, priority, lease,"
            + " current_step, current_step_name, attempt, failure_count, complete_by, next_attempt_at,"
            + " cancel_requested, input, reply_to, created_at, trace_context";

    static ClaimRow map(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new ClaimRow(rs.getString("task_id"), rs.getString("workflow"), rs.getInt("workflow_version"),
                rs.getString("business_key"), TaskStatus.valueOf(rs.getString("state")), rs.getInt("priority"),
                rs.getLong("lease"), rs.getInt("current_step"), rs.getString("current_step_name"),
                rs.getInt("attempt"), rs.getInt("failure_count"), rs.getLong("complete_by"),
                rs.getLong("next_attempt_at"), rs.getBoolean("cancel_requested"), rs.getString("input"),
                rs.getString("reply_to"), rs.getLong("created_at"), rs.getString("trace_context"));
    }

    /** Claim order: priority descending, then due time. */
    static final java.util.Comparator<ClaimRow> ORDER = java.util.Comparator
            .comparingInt((ClaimRow r) -> -r.priority())
            .thenComparingLong(ClaimRow::nextAttemptAt)
            .thenComparing(ClaimRow::taskId);
}
