package dev.sas.console.internal;

import dev.sas.core.TaskSearch;
import dev.sas.core.TaskStatus;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Reads a {@link TaskSearch} from a request's parameters. Stateless. */
final class TaskFilter {

    /** Most tasks one search request reads before it answers with what it found and a cursor. */
    static final int SCAN_LIMIT = 20_000;

    private TaskFilter() {
    }

    /** The search a request's parameters name: {@code status, workflow, createdAfter, createdBefore, error}. */
    static TaskSearch from(Map<String, String> q) {
        String s = blankToNull(q.get("status"));
        TaskStatus status = null;
        if (s != null) {
            try {
                status = TaskStatus.valueOf(s.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("status must be one of " + List.of(TaskStatus.values())
                        + " (any case), was '" + s + "'", e);
            }
        }
        String error = blankToNull(q.get("error"));
        return new TaskSearch(status, blankToNull(q.get("workflow")),
                TaskSearch.parseTime("createdAfter", q.get("createdAfter")),
                TaskSearch.parseTime("createdBefore", q.get("createdBefore")), error == null ? null : error.strip());
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
