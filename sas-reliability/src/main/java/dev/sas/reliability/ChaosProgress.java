package dev.sas.reliability;

import dev.sas.core.TaskStatus;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * What the chaos run's progress line counts (issue 31 item 7): the tasks not yet terminal, by
 * {@link TaskStatus#isTerminal()} — so a task left {@code PARKED}, {@code WAITING} or
 * {@code AWAITING_COMPLETION} is never counted as done — and how the count reads while the database
 * cannot be asked (never {@code -1}).
 */
final class ChaosProgress {
    /** The SQL list of every state that is not terminal, from {@link TaskStatus}, e.g. {@code ('PENDING', ...)}. */
    static final String NON_TERMINAL = Arrays.stream(TaskStatus.values())
            .filter(s -> !s.isTerminal())
            .map(s -> "'" + s.name() + "'")
            .collect(Collectors.joining(", ", "(", ")"));

    private ChaosProgress() {
    }

    /** The query counting the tasks of {@code taskTable} that are not terminal. */
    static String openCountSql(String taskTable) {
        return "SELECT COUNT(*) FROM " + taskTable + " WHERE state IN " + NON_TERMINAL;
    }

    /**
     * The count of open tasks as the progress line prints it.
     *
     * @param open the count just read, or -1 when the database could not be asked
     * @param lastKnown the last count read, or -1 before the first
     */
    static String openCount(long open, long lastKnown) {
        if (open >= 0) {
            return String.valueOf(open);
        }
        return "database unreachable (last count " + (lastKnown < 0 ? "none" : String.valueOf(lastKnown)) + ")";
    }
}
