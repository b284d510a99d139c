package dev.sas.console.internal;

import dev.sas.core.SasClient;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Which tasks a search or a bulk action looks at, with the semantics of the CLI's filters: a state
 * (any case), a workflow, tasks created at or after {@code createdAfter} and before
 * {@code createdBefore}, and a text the last error contains (ignoring case). State and workflow are
 * matched by the store; the rest as the pages go by, oldest first. Immutable.
 *
 * @param status only tasks in this state, or null
 * @param workflow only tasks of this workflow, or null
 * @param createdAfter only tasks created at or after this instant, or null
 * @param createdBefore only tasks created before this instant, or null
 * @param errorContains only tasks whose last error contains this text (any case), or null
 */
record TaskFilter(TaskStatus status, String workflow, Instant createdAfter, Instant createdBefore,
        String errorContains) {

    /** Tasks read from the store per page while filtering. */
    static final int PAGE = 1_000;
    /** Most tasks one search request reads before it answers with what it found and a cursor. */
    static final int SCAN_LIMIT = 20_000;
    /**
     * The id half of a cursor one millisecond before {@code createdAfter}: any id will do, as every
     * task at or after {@code createdAfter} comes after that instant whatever its id.
     */
    private static final TaskId ANY_ID = TaskId.of("0");

    TaskFilter {
        if (createdAfter != null && createdBefore != null && !createdAfter.isBefore(createdBefore)) {
            throw new IllegalArgumentException("createdAfter (" + createdAfter + ") must be before createdBefore ("
                    + createdBefore + ")");
        }
    }

    /** The filter a request's parameters name: {@code status, workflow, createdAfter, createdBefore, error}. */
    static TaskFilter from(Map<String, String> q) {
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
        return new TaskFilter(status, blankToNull(q.get("workflow")), time("createdAfter", q.get("createdAfter")),
                time("createdBefore", q.get("createdBefore")), error == null ? null : error.strip());
    }

    /** True if any filter is set. */
    boolean any() {
        return status != null || workflow != null || createdAfter != null || createdBefore != null
                || errorContains != null;
    }

    /** True if {@code t} matches the filters the store does not apply. */
    boolean matches(TaskInfo t) {
        if (createdAfter != null && t.createdAt().isBefore(createdAfter)) {
            return false;
        }
        if (createdBefore != null && !t.createdAt().isBefore(createdBefore)) {
            return false;
        }
        return errorContains == null || (t.lastError() != null
                && t.lastError().toLowerCase(Locale.ROOT).contains(errorContains.toLowerCase(Locale.ROOT)));
    }

    /**
     * Up to {@code max} matching tasks, oldest first; one more than {@code max} if more match, so
     * the caller can refuse.
     */
    List<TaskInfo> find(SasClient client, int max) {
        Page p = page(client, max + 1, null, null, Integer.MAX_VALUE);
        return p.tasks();
    }

    /**
     * One page of matching tasks after the cursor (null for the first page): up to {@code limit},
     * reading at most about {@code scanLimit} tasks. {@link Page#next()} is where the next page
     * starts, or null when nothing after it can match.
     */
    Page page(SasClient client, int limit, Instant afterCreatedAt, TaskId afterId, int scanLimit) {
        TaskQuery q = TaskQuery.all().withLimit(PAGE);
        if (status != null) {
            q = q.withStatus(status);
        }
        if (workflow != null) {
            q = q.withWorkflow(workflow);
        }
        if (afterCreatedAt != null) {
            q = new TaskQuery(q.status(), q.workflow(), PAGE, afterCreatedAt, afterId);
        } else if (createdAfter != null) {
            // start just before createdAfter: the store skips the older tasks, matches() the rest
            q = new TaskQuery(q.status(), q.workflow(), PAGE, createdAfter.minusMillis(1), ANY_ID);
        }
        List<TaskInfo> found = new ArrayList<>();
        int scanned = 0;
        while (true) {
            List<TaskInfo> page = client.list(q);
            for (TaskInfo t : page) {
                if (createdBefore != null && !t.createdAt().isBefore(createdBefore)) {
                    return new Page(found, null, scanned); // oldest first: nothing later matches
                }
                scanned++;
                if (matches(t)) {
                    found.add(t);
                    if (found.size() == limit) {
                        return new Page(found, t, scanned);
                    }
                }
            }
            if (page.size() < PAGE) {
                return new Page(found, null, scanned);
            }
            TaskInfo last = page.get(page.size() - 1);
            if (scanned >= scanLimit) {
                return new Page(found, last, scanned);
            }
            q = q.after(last);
        }
    }

    /**
     * What one read found.
     *
     * @param tasks the matching tasks
     * @param next the last task read, to continue after; null when no later task can match
     * @param scanned how many tasks were read
     */
    record Page(List<TaskInfo> tasks, TaskInfo next, int scanned) {
    }

    /** The filters as words, for a preview. */
    String describe() {
        List<String> parts = new ArrayList<>();
        if (status != null) {
            parts.add("state " + status);
        }
        if (workflow != null) {
            parts.add("workflow " + workflow);
        }
        if (createdAfter != null) {
            parts.add("created at or after " + createdAfter);
        }
        if (createdBefore != null) {
            parts.add("created before " + createdBefore);
        }
        if (errorContains != null) {
            parts.add("last error containing '" + errorContains + "'");
        }
        return parts.isEmpty() ? "no filter (every task)" : String.join(", ", parts);
    }

    /** An instant ({@code 2026-11-27T08:00:00Z}) or a date (its start, UTC), or null if blank. */
    static Instant time(String name, String value) {
        String v = blankToNull(value);
        if (v == null) {
            return null;
        }
        v = v.strip();
        try {
            return v.length() == 10 ? LocalDate.parse(v).atStartOfDay(ZoneOffset.UTC).toInstant() : Instant.parse(v);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(name + " must be a time such as 2026-11-27T08:00:00Z or a date such as"
                    + " 2026-11-27 (UTC), was '" + value + "'", e);
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
