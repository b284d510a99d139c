package dev.sas.cli;

import dev.sas.core.SasClient;
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
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Which tasks a command looks at or acts on: state, workflow, a range of creation times and a text
 * in the last error. State and workflow are matched by the store; the rest as the pages go by.
 */
final class TaskFilter {

    /** Tasks read per page while filtering. */
    static final int PAGE = 1_000;

    @Option(names = "--status", paramLabel = "STATE",
            description = "only tasks in this state (any case): ${COMPLETION-CANDIDATES}")
    TaskStatus status;

    @Option(names = "--workflow", paramLabel = "NAME", description = "only tasks of this workflow")
    String workflow;

    @Option(names = "--created-after", paramLabel = "TIME", converter = TimeConverter.class,
            description = "only tasks created at or after TIME (2026-11-27T08:00:00Z, or a date: its start, UTC)")
    Instant createdAfter;

    @Option(names = "--created-before", paramLabel = "TIME", converter = TimeConverter.class,
            description = "only tasks created before TIME (same forms)")
    Instant createdBefore;

    @Option(names = "--error-contains", paramLabel = "TEXT",
            description = "only tasks whose last error contains TEXT (ignoring case)")
    String errorContains;

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
     * Up to {@code max} matching tasks, oldest first, reading pages of {@link #PAGE}; one more than
     * {@code max} if more match, so the caller can say so.
     */
    List<TaskInfo> find(SasClient client, int max) {
        TaskQuery q = TaskQuery.all().withLimit(PAGE);
        if (status != null) {
            q = q.withStatus(status);
        }
        if (workflow != null) {
            q = q.withWorkflow(workflow);
        }
        List<TaskInfo> found = new ArrayList<>();
        while (true) {
            List<TaskInfo> page = client.list(q);
            for (TaskInfo t : page) {
                if (createdBefore != null && !t.createdAt().isBefore(createdBefore)) {
                    return found; // oldest first: nothing later matches
                }
                if (matches(t)) {
                    found.add(t);
                    if (found.size() > max) {
                        return found;
                    }
                }
            }
            if (page.size() < PAGE) {
                return found;
            }
            q = q.after(page.get(page.size() - 1));
        }
    }

    /** Checks the combination; call before use. */
    void validate(CommandLine cl) {
        if (createdAfter != null && createdBefore != null && !createdAfter.isBefore(createdBefore)) {
            throw new CommandLine.ParameterException(cl, "--created-after (" + createdAfter
                    + ") must be before --created-before (" + createdBefore + ")");
        }
        if (errorContains != null && errorContains.isBlank()) {
            throw new CommandLine.ParameterException(cl, "--error-contains must not be blank");
        }
    }

    /** The filters as words, for a preview line. */
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
        return String.join(", ", parts);
    }

    /** An instant ({@code 2026-11-27T08:00:00Z}) or a date (its start, UTC). */
    static final class TimeConverter implements CommandLine.ITypeConverter<Instant> {
        @Override
        public Instant convert(String value) {
            try {
                return value.length() == 10 ? LocalDate.parse(value).atStartOfDay(ZoneOffset.UTC).toInstant()
                        : Instant.parse(value);
            } catch (DateTimeParseException e) {
                throw new CommandLine.TypeConversionException("'" + value
                        + "' is not a time: write 2026-11-27T08:00:00Z or 2026-11-27 (UTC)");
            }
        }
    }
}
