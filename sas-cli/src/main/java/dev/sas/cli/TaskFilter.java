package dev.sas.cli;

import dev.sas.core.TaskSearch;
import dev.sas.core.TaskStatus;
import java.time.Instant;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options that name which tasks a command looks at or acts on: state, workflow, a range of
 * creation times and a text in the last error, read into a {@link TaskSearch} (the console's
 * search means the same).
 */
final class TaskFilter {

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

    /**
     * The search these options name.
     *
     * @throws CommandLine.ParameterException if the times are not in order or the error text is blank
     */
    TaskSearch search(CommandLine cl) {
        try {
            return new TaskSearch(status, workflow, createdAfter, createdBefore, errorContains);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage().replace("createdAfter", "--created-after")
                    .replace("createdBefore", "--created-before").replace("errorContains", "--error-contains"));
        }
    }

    /** An instant ({@code 2026-11-27T08:00:00Z}) or a date (its start, UTC). */
    static final class TimeConverter implements CommandLine.ITypeConverter<Instant> {
        @Override
        public Instant convert(String value) {
            try {
                Instant t = TaskSearch.parseTime("time", value);
                if (t == null) {
                    throw new IllegalArgumentException("blank");
                }
                return t;
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("'" + value
                        + "' is not a time: write 2026-11-27T08:00:00Z or 2026-11-27 (UTC)");
            }
        }
    }
}
