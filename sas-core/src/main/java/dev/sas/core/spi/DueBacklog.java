package dev.sas.core.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * How many unclaimed {@code PENDING} tasks of one workflow version are due, and since when; the
 * supervisor compares it with what live runtimes advertise to find tasks nobody can run. Immutable
 * and thread-safe.
 *
 * @param workflowVersion the workflow version
 * @param tasks how many tasks, at least 1
 * @param dueSince the earliest due time among them
 */
public record DueBacklog(WorkflowVersion workflowVersion, long tasks, Instant dueSince) {

    /** @throws NullPointerException if an argument is null */
    public DueBacklog {
        Objects.requireNonNull(workflowVersion, "workflowVersion must not be null");
        Objects.requireNonNull(dueSince, "dueSince must not be null");
    }
}
