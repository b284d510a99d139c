package dev.sas.core.spi;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.util.Collections;
import java.util.List;

/**
 * A task a scheduler now holds. The store has already incremented its lease and attempt,
 * stamped {@code lockedBy} and {@code completeBy}, and recorded a STEP_STARTED (or
 * COMPENSATION_STARTED) event, all in the claim's transaction. A task whose cancel was requested
 * and that is not compensating gets no STEP_STARTED: the scheduler does not start its step, it
 * cancels it (or starts compensating it) at once.
 *
 * @param taskId the task
 * @param workflow workflow name
 * @param workflowVersion workflow version
 * @param businessKey business key
 * @param status {@code PROCESSING}, or {@code COMPENSATING} when compensating
 * @param lease the fencing token of this claim; every write must name it
 * @param currentStep the step to run (or whose compensation to run)
 * @param attempt the attempt at that step, from 1
 * @param failureCount supervisor time-outs of that step so far
 * @param completeBy deadline of this attempt
 * @param cancelRequested an operator asked to cancel
 * @param input encoded input
 * @param statusChannel status channel, or null
 * @param createdAt submission time
 * @param outputs recorded outputs by index of completed steps, and of a durable timer that waits
 *     ({@link dev.sas.core.StepStatus#WAITING}: the instant it fires); null where none or not completed
 * @param traceContext the trace context stored at submission ({@link NewTask#traceContext()}), or null
 * @param skippedSteps the indexes of the steps recorded {@link dev.sas.core.StepStatus#SKIPPED}, which are
 *     never compensated
 */
public record ClaimedTask(
        TaskId taskId,
        String workflow,
        int workflowVersion,
        String businessKey,
        TaskStatus status,
        long lease,
        int currentStep,
        int attempt,
        int failureCount,
        Instant completeBy,
        boolean cancelRequested,
        String input,
        String statusChannel,
        Instant createdAt,
        List<String> outputs,
        String traceContext,
        List<Integer> skippedSteps) {

    /** Copies {@code outputs}, which may contain nulls, and {@code skippedSteps} (null: none). */
    public ClaimedTask {
        outputs = outputs == null ? List.of() : Collections.unmodifiableList(new java.util.ArrayList<>(outputs));
        skippedSteps = skippedSteps == null ? List.of() : List.copyOf(skippedSteps);
    }

    /** A claim with no skipped steps. */
    public ClaimedTask(TaskId taskId, String workflow, int workflowVersion, String businessKey, TaskStatus status,
            long lease, int currentStep, int attempt, int failureCount, Instant completeBy, boolean cancelRequested,
            String input, String replyTo, Instant createdAt, List<String> outputs, String traceContext) {
        this(taskId, workflow, workflowVersion, businessKey, status, lease, currentStep, attempt, failureCount,
                completeBy, cancelRequested, input, replyTo, createdAt, outputs, traceContext, List.of());
    }

    /**
     * The claim {@link ClaimedSubmits#submitClaimed} makes of a task it inserts: step 0, attempt 1,
     * lease 1, due by {@code createdAt + firstStepTimeout}.
     */
    public static ClaimedTask atSubmit(NewTask task) {
        return new ClaimedTask(task.taskId(), task.workflow(), task.workflowVersion(), task.businessKey(),
                TaskStatus.PROCESSING, 1, 0, 1, 0, task.createdAt().plus(task.firstStepTimeout()), false, task.input(),
                task.statusChannel(), task.createdAt(), List.of(), task.traceContext());
    }

    /** A claim without a trace context. */
    public ClaimedTask(TaskId taskId, String workflow, int workflowVersion, String businessKey, TaskStatus status,
            long lease, int currentStep, int attempt, int failureCount, Instant completeBy, boolean cancelRequested,
            String input, String statusChannel, Instant createdAt, List<String> outputs) {
        this(taskId, workflow, workflowVersion, businessKey, status, lease, currentStep, attempt, failureCount,
                completeBy, cancelRequested, input, statusChannel, createdAt, outputs, null);
    }
}
