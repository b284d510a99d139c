package dev.sas.core;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Which tasks an operator's search or bulk action looks at: a state, a workflow, tasks created at
 * or after {@code createdAfter} and before {@code createdBefore}, and a text the last error
 * contains (ignoring case). State and workflow are matched by the store ({@link TaskQuery}); the
 * rest as the pages go by, oldest first. The console and the CLI search with it, so both mean the
 * same by each filter. Immutable and thread-safe.
 *
 * <pre>{@code
 * TaskSearch declined = new TaskSearch(TaskStatus.ERROR, "orders", null, null, "card declined");
 * List<TaskInfo> found = declined.find(client, 1_000); // 1,001 entries: more match
 * }</pre>
 *
 * @param status only tasks in this state, or null
 * @param workflow only tasks of this workflow, or null
 * @param createdAfter only tasks created at or after this instant, or null
 * @param createdBefore only tasks created before this instant, or null
 * @param errorContains only tasks whose last error contains this text (any case), or null
 */
public record TaskSearch(TaskStatus status, String workflow, Instant createdAfter, Instant createdBefore,
        String errorContains) {

    /** Tasks read from the store per page while filtering: 1,000. */
    public static final int PAGE = 1_000;
    /**
     * The id half of a cursor one millisecond before {@code createdAfter}: any id will do, as every
     * task at or after {@code createdAfter} comes after that instant whatever its id.
     */
    private static final TaskId ANY_ID = TaskId.of("0");

    /**
     * @throws IllegalArgumentException if {@code createdAfter} is not before {@code createdBefore},
     *     or {@code errorContains} is blank
     */
    public TaskSearch {
        if (errorContains != null && errorContains.isBlank()) {
            throw new IllegalArgumentException("errorContains must not be blank; leave it null to match any error");
        }
        if (createdAfter != null && createdBefore != null && !createdAfter.isBefore(createdBefore)) {
            throw new IllegalArgumentException("createdAfter (" + createdAfter + ") must be before createdBefore ("
                    + createdBefore + ")");
        }
    }

    /** True if any filter is set. */
    public boolean any() {
        return status != null || workflow != null || createdAfter != null || createdBefore != null
                || errorContains != null;
    }

    /**
     * True if {@code t} matches the filters the store does not apply (creation time and error text).
     *
     * @throws NullPointerException if {@code t} is null
     */
    public boolean matches(TaskInfo t) {
        Objects.requireNonNull(t, "t must not be null");
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
     * the caller can say so or refuse.
     *
     * @throws IllegalArgumentException if {@code max} is not positive
     * @throws StateStoreException if the store failed
     */
    public List<TaskInfo> find(SasClient client, int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be positive, was " + max);
        }
        Page p = page(client, max + 1, null, null, Integer.MAX_VALUE);
        return p.tasks();
    }

    /**
     * One page of matching tasks after the cursor (null for the first page): up to {@code limit},
     * reading at most about {@code scanLimit} tasks. {@link Page#next()} is where the next page
     * starts, or null when nothing after it can match.
     *
     * @param afterCreatedAt with {@code afterId}, the cursor ({@link Page#next()}), or null for the first page
     * @throws StateStoreException if the store failed
     */
    public Page page(SasClient client, int limit, Instant afterCreatedAt, TaskId afterId, int scanLimit) {
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
    public record Page(List<TaskInfo> tasks, TaskInfo next, int scanned) {
    }

    /** The filters as words, for a preview: {@code state ERROR, workflow orders}. */
    public String describe() {
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

    /**
     * Reads a time as operators write it: an instant ({@code 2026-11-27T08:00:00Z}) or a date (its
     * start, UTC); null if blank.
     *
     * @param name the setting, for the error message
     * @throws IllegalArgumentException naming {@code name} if {@code value} is neither
     */
    public static Instant parseTime(String name, String value) {
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
