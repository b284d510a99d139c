package dev.sas.core.spi;

import java.util.Objects;

/**
 * One version of one workflow, as a claimer names what it can run ({@link StateStore#claim}) and
 * as a runtime advertises it to its peers. Immutable and thread-safe.
 *
 * @param workflow the workflow's name
 * @param version its version, from 1
 */
public record WorkflowVersion(String workflow, int version) {

    /**
     * @throws NullPointerException if {@code workflow} is null
     * @throws IllegalArgumentException if {@code version} is below 1
     */
    public WorkflowVersion {
        Objects.requireNonNull(workflow, "workflow must not be null");
        if (version < 1) {
            throw new IllegalArgumentException("version must be at least 1, was " + version);
        }
    }

    @Override
    public String toString() {
        return workflow + " v" + version;
    }
}
