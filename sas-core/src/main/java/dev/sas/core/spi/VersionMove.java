package dev.sas.core.spi;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * An operator's move of one task from one version of its workflow to another
 * ({@link VersionMoves#move}): where each step of the old version continues in the new one. The
 * store reads the task row and the names of its step rows under its lock, asks {@link #plan} where
 * they go and {@link TaskDecisions#moveVersion} whether the task's state allows it, and writes both
 * with the {@link TaskEvent.Type#VERSION_MOVED} event from {@link #event} in one transaction.
 * Immutable and thread-safe.
 *
 * @param taskId the task
 * @param fromVersion the version the task must be at; a task at another one is not moved
 * @param toVersion the version it moves to
 * @param targets where the step of each name in {@code fromVersion} continues in {@code toVersion}
 * @param note who moved it and why ({@code OperatorNote.describe()}), or null
 */
public record VersionMove(TaskId taskId, int fromVersion, int toVersion, Map<String, Target> targets, String note) {

    /**
     * @throws NullPointerException if {@code taskId} or {@code targets} is null
     * @throws IllegalArgumentException if the versions are equal
     */
    public VersionMove {
        Objects.requireNonNull(taskId, "taskId must not be null");
        targets = Map.copyOf(targets);
        if (fromVersion == toVersion) {
            throw new IllegalArgumentException("a move needs two versions, was v" + fromVersion + " to itself");
        }
    }

    /**
     * A step of {@code toVersion}.
     *
     * @param index its position
     * @param name its name
     * @param timeout the deadline of one attempt at it
     */
    public record Target(int index, String name, Duration timeout) {
        /** @throws NullPointerException if {@code name} or {@code timeout} is null */
        public Target {
            Objects.requireNonNull(name, "name must not be null");
            Objects.requireNonNull(timeout, "timeout must not be null");
        }
    }

    /**
     * Where the task and its step rows go: {@code current} is the step it continues at,
     * {@code rows} the new index and name of each step row (by old index). {@code unmapped} names
     * the first step with no place in {@code toVersion} (or that would share one with another);
     * then nothing may be moved.
     */
    public record Plan(Target current, Map<Integer, Target> rows, String unmapped) {
        /** Whether every step has its own place. */
        public boolean complete() {
            return unmapped == null;
        }
    }

    /**
     * Plans the move of a task at step {@code currentStepName} with the given step rows.
     *
     * @param currentStepName the name of the step the task is at, as stored
     * @param stepRows the names of the task's step rows by index
     * @throws NullPointerException if {@code stepRows} is null
     */
    public Plan plan(String currentStepName, Map<Integer, String> stepRows) {
        Target current = currentStepName == null ? null : targets.get(currentStepName);
        if (current == null) {
            return new Plan(null, Map.of(), currentStepName == null ? "(unnamed current step)" : currentStepName);
        }
        Map<Integer, Target> rows = new LinkedHashMap<>();
        Map<Integer, String> taken = new HashMap<>();
        for (Map.Entry<Integer, String> row : stepRows.entrySet()) {
            Target t = row.getValue() == null ? null : targets.get(row.getValue());
            String before = t == null ? null : taken.putIfAbsent(t.index(), row.getValue());
            if (t == null || before != null) {
                return new Plan(current, Map.of(), row.getValue() == null ? "(unnamed step " + row.getKey() + ")"
                        : row.getValue());
            }
            rows.put(row.getKey(), t);
        }
        return new Plan(current, Map.copyOf(rows), null);
    }

    /** The event the move records, at the step the task continues at. */
    public TaskEvent event(String businessKey, String workflow, String fromStepName, Target to, Instant now) {
        return new TaskEvent(taskId, businessKey, workflow, TaskEvent.Type.VERSION_MOVED, to.index(), to.name(), 0, now,
                "moved from v" + fromVersion + " step '" + fromStepName + "' to v" + toVersion + " step '" + to.name()
                        + "'" + (note == null ? "" : " " + note));
    }

    /**
     * What became of a move.
     *
     * @param kind what happened
     * @param status the task's state as read (null if not found)
     * @param version the task's version as read (0 if not found)
     * @param step for {@link Kind#UNMAPPED_STEP}, the step with no place in the new version; else null
     * @param event for {@link Kind#MOVED}, the event recorded; else null
     */
    public record Result(Kind kind, TaskStatus status, int version, String step, TaskEvent event) {
        /** @throws NullPointerException if {@code kind} is null */
        public Result {
            Objects.requireNonNull(kind, "kind must not be null");
        }
    }

    /** The outcomes of a move. */
    public enum Kind {
        /** The task was moved and the event recorded. */
        MOVED,
        /** There is no such task. */
        NOT_FOUND,
        /** The task is at another version than {@link VersionMove#fromVersion()}; nothing changed. */
        OTHER_VERSION,
        /** The task's state does not allow a move ({@link TaskDecisions#moveVersion}); nothing changed. */
        NOT_MOVABLE,
        /** A step of the task has no place of its own in the new version; nothing changed. */
        UNMAPPED_STEP
    }
}
