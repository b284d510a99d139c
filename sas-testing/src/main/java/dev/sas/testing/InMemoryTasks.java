package dev.sas.testing;

import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.StorableText;
import dev.sas.core.spi.TaskChange;
import dev.sas.core.spi.TaskSnapshot;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The task table of {@link InMemoryStateStore} and how a row is written: a {@link Transition}
 * fenced by lease, state, step and guard, a {@link TaskChange} decided from a {@link TaskSnapshot},
 * and events appended to the task's log and its status channel's outbox. The store's parts share
 * its {@link #lock}; every method here is called under it. Not thread-safe on its own.
 */
final class InMemoryTasks {

    /** The one lock of the store: every part reads and writes under it. */
    final Object lock = new Object();
    final Map<TaskId, Row> rows = new HashMap<>();
    final Map<String, TaskId> byBusinessKey = new HashMap<>();
    final InMemoryStatusOutbox outbox = new InMemoryStatusOutbox(lock);

    static final class Row {
        TaskId taskId;
        String workflow;
        int version;
        String businessKey;
        TaskStatus status;
        int priority;
        String lockedBy;
        long lease;
        Instant completeBy;
        Instant nextAttemptAt;
        int failureCount;
        int currentStep;
        String currentStepName;
        int attempt;
        Duration stepTimeout;
        boolean cancelRequested;
        Instant createdAt;
        Instant updatedAt;
        String input;
        String statusChannel;
        String traceContext;
        String lastError;
        long lastTransition;
        final TreeMap<Integer, StepRow> steps = new TreeMap<>();
        final List<TaskEvent> events = new ArrayList<>();
    }

    static final class StepRow {
        int index;
        String name;
        StepStatus status;
        int attempts;
        String output;
        String error;
        Instant startedAt;
        Instant finishedAt;
        StepStatus compensationStatus;
    }

    /**
     * Writes {@code t} as {@link dev.sas.core.spi.StateStore#write} does: refused if it holds text a
     * database could not store ({@link StorableText#problemIn}), as the JDBC store refuses it.
     */
    WriteOutcome apply(Transition t, Instant now) {
        String unstorable = StorableText.problemIn(t);
        if (unstorable != null) {
            return WriteOutcome.refused(unstorable);
        }
        Row r = rows.get(t.taskId());
        if (r != null && r.lastTransition == t.id()) {
            return WriteOutcome.APPLIED_ALREADY;
        }
        WriteOutcome fence = check(t, r, now);
        if (fence != null) {
            return fence;
        }
        r.lastTransition = t.id();
        r.status = t.status();
        r.currentStep = t.currentStep();
        r.currentStepName = t.currentStepName();
        r.attempt = t.attempt();
        r.failureCount = t.failureCount();
        r.stepTimeout = t.stepTimeout();
        if (t.keepLock()) {
            r.completeBy = now.plus(t.stepTimeout());
        } else if (t.status() == TaskStatus.AWAITING_COMPLETION) {
            // nobody holds it; lease and deadline stay in force for the reply and the supervisor
            r.lockedBy = Transition.AWAITING_COMPLETION_HOLDER;
        } else {
            r.lockedBy = null;
            r.completeBy = null;
            r.nextAttemptAt = t.status().isTerminal() ? null : t.nextAttemptAt();
        }
        if (t.lastError() != null) {
            r.lastError = t.lastError();
        }
        r.updatedAt = now;
        StepUpdate u = t.step();
        if (u != null) {
            StepRow s = r.steps.computeIfAbsent(u.index(), i -> new StepRow());
            s.index = u.index();
            s.name = u.name();
            if (u.compensation()) {
                s.compensationStatus = u.compensationStatus();
                s.error = u.error();
                if (s.status == null) {
                    s.status = StepStatus.COMPLETED;
                }
            } else {
                s.status = u.status();
                s.attempts = u.attempts();
                s.output = u.output();
                s.error = u.error();
                s.startedAt = u.startedAt();
                s.finishedAt = u.finishedAt();
            }
        }
        addEvents(r, t.events());
        return WriteOutcome.APPLIED;
    }

    /** Why {@code t} cannot be written to {@code r}: its lease, state, step, guard or a cancel; null if it can. */
    static WriteOutcome check(Transition t, Row r, Instant now) {
        if (r == null || r.lease != t.lease() || r.lockedBy == null || r.status != t.fromStatus()
                || r.currentStep != t.fromStep()) {
            return WriteOutcome.STALE;
        }
        boolean expired = r.completeBy.isBefore(now);
        if (t.guard() == Transition.Guard.HOLDER ? expired : !expired) {
            return WriteOutcome.STALE;
        }
        if (t.unlessCancelRequested() && r.cancelRequested) {
            return WriteOutcome.CANCEL_REQUESTED;
        }
        return null;
    }

    /** The row as {@link dev.sas.core.spi.TaskDecisions} reads it. */
    static TaskSnapshot snapshot(Row r) {
        return new TaskSnapshot(r.status, r.lockedBy != null, r.nextAttemptAt, r.attempt, r.failureCount,
                r.cancelRequested, r.createdAt);
    }

    /** Writes {@code change}, if there is one, as a JDBC store does. */
    static boolean apply(Row r, Optional<TaskChange> change, Instant now) {
        if (change.isEmpty()) {
            return false;
        }
        TaskChange c = change.get();
        r.status = c.status();
        r.nextAttemptAt = c.nextAttemptAt();
        r.attempt = c.attempt();
        r.failureCount = c.failureCount();
        r.cancelRequested = c.cancelRequested();
        if (c.releaseHolder()) {
            r.lockedBy = null;
            r.completeBy = null;
        }
        if (c.lastError() != null) {
            r.lastError = c.lastError();
        }
        r.updatedAt = now;
        return true;
    }

    /** Records an event of {@code type} at the task's current step, and returns it with the task's channel. */
    RecordedEvent record(Row r, TaskEvent.Type type, Instant now, String message) {
        TaskEvent e = new TaskEvent(r.taskId, r.businessKey, r.workflow, type, r.currentStep, r.currentStepName, 0,
                now, message);
        addEvents(r, List.of(e));
        return new RecordedEvent(e, r.statusChannel);
    }

    /** Appends events to the task's log and, if it has a status channel, to the channel's outbox. */
    void addEvents(Row r, List<TaskEvent> events) {
        r.events.addAll(events);
        if (r.statusChannel != null) {
            for (TaskEvent e : events) {
                outbox.append(r.statusChannel, e);
            }
        }
    }

    static TaskInfo info(Row r, boolean withSteps) {
        List<TaskInfo.StepInfo> steps = new ArrayList<>();
        if (withSteps) {
            for (StepRow s : r.steps.values()) {
                steps.add(new TaskInfo.StepInfo(s.index, s.name, s.status, s.attempts, s.output, s.error,
                        s.startedAt, s.finishedAt, s.compensationStatus));
            }
        }
        return new TaskInfo(r.taskId, r.workflow, r.version, r.businessKey, r.status, r.priority, r.currentStep,
                r.failureCount, r.lockedBy, r.lease, r.completeBy, r.nextAttemptAt, r.createdAt, r.updatedAt,
                r.lastError, r.cancelRequested, steps, r.attempt);
    }

    static String key(String workflow, String businessKey) {
        return workflow + '\u0000' + businessKey;
    }
}
