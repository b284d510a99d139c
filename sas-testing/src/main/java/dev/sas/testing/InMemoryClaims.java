package dev.sas.testing;

import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.DeadlineRenewal;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.testing.InMemoryTasks.Row;
import dev.sas.testing.InMemoryTasks.StepRow;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Who holds a task of {@link InMemoryStateStore}: the atomic claim, deadline renewals by the
 * holder, and the supervisor's scan for expired claims, under the store's lock. Thread-safe.
 */
final class InMemoryClaims {

    private final InMemoryTasks tasks;

    InMemoryClaims(InMemoryTasks tasks) {
        this.tasks = tasks;
    }

    List<ClaimedTask> claim(String instanceId, int limit, Instant now, Set<WorkflowVersion> runnable) {
        Objects.requireNonNull(runnable, "runnable must not be null");
        synchronized (tasks.lock) {
            List<Row> due = new ArrayList<>();
            for (Row r : tasks.rows.values()) {
                if (r.lockedBy == null && TaskDecisions.claimable(r.status)
                        && !r.nextAttemptAt.isAfter(now) && runnable.contains(new WorkflowVersion(r.workflow, r.version))) {
                    due.add(r);
                }
            }
            due.sort(Comparator.comparingInt((Row r) -> -r.priority).thenComparing(r -> r.nextAttemptAt));
            List<ClaimedTask> claimed = new ArrayList<>(Math.min(limit, due.size()));
            for (Row r : due) {
                if (claimed.size() >= limit) {
                    break;
                }
                r.lockedBy = instanceId;
                r.lease++;
                r.attempt++;
                r.completeBy = now.plus(r.stepTimeout);
                r.status = TaskDecisions.claimed(r.status);
                r.updatedAt = now;
                boolean compensating = r.status == TaskStatus.COMPENSATING;
                if (compensating || !r.cancelRequested) {
                    // a task whose cancel was requested is not started: the scheduler cancels it at once
                    tasks.addEvents(r, List.of(new TaskEvent(r.taskId, r.businessKey, r.workflow,
                            compensating ? TaskEvent.Type.COMPENSATION_STARTED : TaskEvent.Type.STEP_STARTED,
                            r.currentStep, r.currentStepName, r.attempt, now, null)));
                }
                List<String> outputs = new ArrayList<>();
                List<Integer> skipped = new ArrayList<>();
                for (StepRow s : r.steps.values()) {
                    if (s.status == StepStatus.COMPLETED || s.status == StepStatus.WAITING) {
                        while (outputs.size() <= s.index) {
                            outputs.add(null);
                        }
                        outputs.set(s.index, s.output);
                    } else if (s.status == StepStatus.SKIPPED) {
                        skipped.add(s.index);
                    }
                }
                claimed.add(new ClaimedTask(r.taskId, r.workflow, r.version, r.businessKey, r.status, r.lease,
                        r.currentStep, r.attempt, r.failureCount, r.completeBy, r.cancelRequested, r.input,
                        r.statusChannel, r.createdAt, outputs, r.traceContext, skipped));
            }
            return claimed;
        }
    }

    List<DeadlineRenewal.Outcome> renewDeadlines(List<DeadlineRenewal> renewals, Instant now) {
        Objects.requireNonNull(renewals, "renewals must not be null");
        Objects.requireNonNull(now, "now must not be null");
        synchronized (tasks.lock) {
            List<DeadlineRenewal.Outcome> out = new ArrayList<>(renewals.size());
            for (DeadlineRenewal x : renewals) {
                Row r = tasks.rows.get(Objects.requireNonNull(x, "a renewal must not be null").taskId());
                boolean held = r != null && r.lease == x.lease() && x.holder().equals(r.lockedBy)
                        && r.currentStep == x.step() && r.status == x.status();
                if (held && (!r.completeBy.isBefore(now) || r.completeBy.equals(x.completeBy()))) {
                    r.completeBy = x.completeBy();
                    out.add(DeadlineRenewal.Outcome.RENEWED);
                } else {
                    out.add(DeadlineRenewal.Outcome.STALE);
                }
            }
            return out;
        }
    }

    List<ExpiredTask> findExpired(Instant now, int limit) {
        synchronized (tasks.lock) {
            List<Row> expired = new ArrayList<>();
            for (Row r : tasks.rows.values()) {
                if (r.lockedBy != null && r.completeBy.isBefore(now)) {
                    expired.add(r);
                }
            }
            expired.sort(Comparator.comparing(r -> r.completeBy));
            List<ExpiredTask> out = new ArrayList<>();
            for (Row r : expired.subList(0, Math.min(limit, expired.size()))) {
                out.add(new ExpiredTask(r.taskId, r.workflow, r.version, r.businessKey, r.status, r.lease,
                        r.lockedBy, r.currentStep, r.attempt, r.failureCount, r.completeBy, r.cancelRequested,
                        r.statusChannel));
            }
            return out;
        }
    }
}
