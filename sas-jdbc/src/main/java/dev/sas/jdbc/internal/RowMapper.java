package dev.sas.jdbc.internal;

import dev.sas.core.StepStatus;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.ExpiredTask;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;

/** Turns result rows into the SPI's domain types. Times are stored as epoch milliseconds. Stateless. */
final class RowMapper {

    /** The task columns {@link #taskInfo} reads. */
    static final String TASK_COLUMNS = "task_id, workflow, workflow_version, business_key, state, priority,"
            + " current_step, failure_count, locked_by, lease, complete_by, next_attempt_at, created_at, updated_at,"
            + " last_error, cancel_requested, attempt";

    /** The step columns {@link #stepInfo} reads, in order. */
    static final String STEP_COLUMNS = "step_index, step_name, state, attempts, output, error, started_at,"
            + " finished_at, compensation_state";

    /** The columns {@link #expiredTask} reads, in order. */
    static final String EXPIRED_COLUMNS = "task_id, workflow, workflow_version, business_key, state, lease,"
            + " locked_by, current_step, attempt, failure_count, complete_by, cancel_requested, reply_to";

    private RowMapper() {
    }

    /** A task row of {@link #TASK_COLUMNS} with {@code steps}. */
    static TaskInfo taskInfo(ResultSet rs, List<TaskInfo.StepInfo> steps) throws SQLException {
        return new TaskInfo(TaskId.of(rs.getString("task_id")), rs.getString("workflow"), rs.getInt("workflow_version"),
                rs.getString("business_key"), TaskStatus.valueOf(rs.getString("state")), rs.getInt("priority"),
                rs.getInt("current_step"), rs.getInt("failure_count"), rs.getString("locked_by"), rs.getLong("lease"),
                instantOrNull(rs, rs.findColumn("complete_by")), instantOrNull(rs, rs.findColumn("next_attempt_at")),
                Instant.ofEpochMilli(rs.getLong("created_at")), Instant.ofEpochMilli(rs.getLong("updated_at")),
                rs.getString("last_error"), rs.getBoolean("cancel_requested"), steps, rs.getInt("attempt"));
    }

    /** {@code task} with {@code steps} instead of its own. */
    static TaskInfo withSteps(TaskInfo i, List<TaskInfo.StepInfo> steps) {
        return new TaskInfo(i.taskId(), i.workflow(), i.workflowVersion(), i.businessKey(), i.status(),
                i.priority(), i.currentStep(), i.failureCount(), i.lockedBy(), i.lease(), i.completeBy(),
                i.nextAttemptAt(), i.createdAt(), i.updatedAt(), i.lastError(), i.cancelRequested(), steps, i.attempt());
    }

    /** A step row of {@link #STEP_COLUMNS}. */
    static TaskInfo.StepInfo stepInfo(ResultSet rs) throws SQLException {
        return new TaskInfo.StepInfo(rs.getInt(1), rs.getString(2), stepStatus(rs.getString(3)),
                rs.getInt(4), rs.getString(5), rs.getString(6), instantOrNull(rs, 7), instantOrNull(rs, 8),
                stepStatus(rs.getString(9)));
    }

    /** A task row of {@link #EXPIRED_COLUMNS}. */
    static ExpiredTask expiredTask(ResultSet rs) throws SQLException {
        return new ExpiredTask(TaskId.of(rs.getString(1)), rs.getString(2), rs.getInt(3),
                rs.getString(4), TaskStatus.valueOf(rs.getString(5)), rs.getLong(6), rs.getString(7),
                rs.getInt(8), rs.getInt(9), rs.getInt(10), Instant.ofEpochMilli(rs.getLong(11)),
                rs.getBoolean(12), rs.getString(13));
    }

    /** A claimed row with the outputs of its completed steps and the steps it skipped. */
    static ClaimedTask claimedTask(ClaimRow r, List<String> outputs, List<Integer> skipped) {
        return new ClaimedTask(TaskId.of(r.taskId()), r.workflow(), r.workflowVersion(), r.businessKey(),
                r.status(), r.lease(), r.currentStep(), r.attempt(), r.failureCount(),
                Instant.ofEpochMilli(r.completeBy()), r.cancelRequested(), r.input(), r.statusChannel(),
                Instant.ofEpochMilli(r.createdAt()), outputs, r.traceContext(), skipped);
    }

    static Long longOrNull(ResultSet rs, int column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
    }

    static Instant instantOrNull(ResultSet rs, int column) throws SQLException {
        Long v = longOrNull(rs, column);
        return v == null ? null : Instant.ofEpochMilli(v);
    }

    private static StepStatus stepStatus(String s) {
        return s == null ? null : StepStatus.valueOf(s);
    }
}
